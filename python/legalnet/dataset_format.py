"""The format of a legalnet dataset (docs/dataset.md) as the Python readers check it: the column
tables (the C++ ones, lib/data/dataset_format.h), the checks made when a file is opened (storage,
links, columns, sizes), what a file is (its identity, checked by every process that opens it
later) and how its chunks can be read."""
import os

import h5py

from .moves import MOVE_INDICES
from .renames import complete_interrupted_commit

FORMAT = "legalnet-dataset"
# The dataset's columns, name -> (element type, each row's shape), in the order of the C++
# tables (lib/data/dataset_format.h ROW_COLUMNS and GAME_COLUMNS; tests/python/test_package.py
# checks them against a file tensorize wrote from those tables).
ROW_COLUMNS = {"positions": ("int8", (7, 8, 8)), "legal_moves": ("uint8", (MOVE_INDICES,)),
               "played_move": ("int16", ()), "played_promotion": ("int8", ()), "game": ("int64", ()),
               "ply": ("int32", ()), "castling": ("uint8", ()), "en_passant": ("int8", ()),
               "halfmove_clock": ("int32", ()), "fullmove_number": ("int32", ())}
GAME_COLUMNS = {"first_row": ("int64", ()), "num_rows": ("int32", ()), "plies": ("int32", ()),
                "source": ("int32", ()), "source_game": ("int64", ()), "source_line": ("int64", ()),
                "result": ("int8", ()), "termination": ("int8", ())}
# The columns the readers take, with each row's shape.
ROW_SHAPES = {name: ROW_COLUMNS[name][1] for name in ("positions", "legal_moves", "castling", "en_passant", "ply")}
# Rows decoded together when a file's chunks cannot be read directly (merge's virtual datasets).
FALLBACK_CHUNK_ROWS = 256


def _check_storage(path, f):
    """Refuses datasets whose values live outside the file: external raw storage (any file on the
    machine, or a FIFO that never ends) and virtual datasets other than ``tensorize merge``'s (each
    source a regular file beside it holding a column of the same name stored in itself)."""
    folder = os.path.dirname(os.path.abspath(path))
    found = []
    f.visititems(lambda name, obj: found.append((name, obj)) if isinstance(obj, h5py.Dataset) else None)
    for name, dset in found:
        if dset.external:
            raise ValueError(f"{path}: dataset '{name}' keeps its values in an external file; "
                             "only data inside the file is read")
        if not dset.is_virtual:
            _check_stored_size(path, name, dset)
            continue
        # HDF5 looks for a relative source under $HDF5_VDS_PREFIX before the file's folder (the
        # variable outranks any access property): the shards checked here would not be read.
        prefix = os.environ.get("HDF5_VDS_PREFIX")
        if prefix:
            raise ValueError(f"{path}: dataset '{name}' is joined from shards, and HDF5_VDS_PREFIX "
                             f"({prefix!r:.100}) would make HDF5 read them from elsewhere than beside the file; "
                             "unset it")
        for source in dset.virtual_sources():
            at = f"{path}: dataset '{name}' is joined from '{source.file_name}'"
            if "%" in source.file_name or source.dset_name.lstrip("/") != name or "/" in name:
                raise ValueError(f"{at}, not as tensorize merge joins shards")
            # A plain file name, the shard beside the file: an absolute name or one with a folder
            # could be any file on the machine.
            if "/" in source.file_name or source.file_name == "..":
                raise ValueError(f"{at}, which is not beside it (merge joins only shards in the file's own folder)")
            shard = os.path.join(folder, source.file_name)
            if not os.path.isfile(shard):
                raise ValueError(f"{at}, which is missing or not a regular file")
            if os.path.samefile(shard, path):
                raise ValueError(f"{at}, which is this file itself")
            try:
                s = h5py.File(shard, "r")
            except OSError:
                raise ValueError(f"{at}, which is not a legalnet dataset") from None
            with s:
                column = s.get(name) if isinstance(s.get(name, getlink=True), h5py.HardLink) else None
                if not isinstance(column, h5py.Dataset) or column.is_virtual or column.external:
                    raise ValueError(f"{at}, whose '{name}' is not stored in that file itself")


def _check_hard_link(path, f, name):
    """Only a hard link, to an object of this file: h5py would follow a soft link to another name
    and an external link into another file (any file on the machine, or a FIFO that never ends)."""
    link = f.get(name, getlink=True)
    if link is None or isinstance(link, h5py.HardLink):
        return
    kind = ("an external link (into another file)" if isinstance(link, h5py.ExternalLink)
            else "a soft link (to another name)" if isinstance(link, h5py.SoftLink) else "a user-defined link")
    raise ValueError(f"{path}: dataset '{name}' is {kind}; only the file's own datasets are read")


def _check_columns(path, f):
    """The row columns the readers use: present, integer, one row shape, one row count."""
    rows = None
    for name, tail in ROW_SHAPES.items():
        _check_hard_link(path, f, name)
        column = f.get(name)
        if not isinstance(column, h5py.Dataset):
            raise ValueError(f"{path}: no dataset '{name}' (not a legalnet dataset)")
        if column.dtype.kind not in "iu" or column.ndim != 1 + len(tail) or column.shape[1:] != tail:
            raise ValueError(f"{path}: dataset '{name}' holds {column.dtype} {column.shape}, "
                             f"expected integers (N{''.join(', ' + str(d) for d in tail)})")
        if rows is not None and column.shape[0] != rows:
            raise ValueError(f"{path}: dataset '{name}' has {column.shape[0]} rows, 'positions' {rows}")
        rows = column.shape[0]


def _check_stored_size(path, name, dset):
    """Refuses a dataset that claims more values than its stored bytes can hold (2^40 rows of
    chunks never written, read as zeros; a filter that stores a chunk of any size in a few bytes):
    gzip inflates at most 1032 bytes per byte stored."""
    dcpl = dset.id.get_create_plist()
    filters = set(dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters()))
    foreign = filters - {h5py.h5z.FILTER_DEFLATE, h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_FLETCHER32}
    if foreign:
        raise ValueError(f"{path}: dataset '{name}' is stored through HDF5 filter {min(foreign)}, "
                         "which this reader does not take (gzip and shuffle only)")
    claimed, stored = dset.size * dset.dtype.itemsize, dset.id.get_storage_size()
    most = stored * 1032 if h5py.h5z.FILTER_DEFLATE in filters else stored
    if claimed > most and stored < claimed:
        raise ValueError(f"{path}: dataset '{name}' claims {claimed} bytes of values but stores {stored} bytes")


def _open(path):
    complete_interrupted_commit(path)  # a killed tensorize's renames onto it and its other parts, finished
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file (a dataset is read from a file on disk)")
    f = h5py.File(path, "r")
    try:
        _check_storage(path, f)
        fmt = f.attrs.get("format")
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if fmt != FORMAT:
            raise ValueError(f"{path}: not a legalnet dataset (format {fmt!r})")
        _check_columns(path, f)
    except BaseException:
        f.close()
        raise
    return f


def _identity(path, f):
    """What the open file ``f`` (h5py) is: (st_dev, st_ino, st_size, st_mtime_ns) of HDF5's own
    descriptor (the sec2 driver's, the default), else of a stat of ``path`` made just after it was
    opened. A Dataset records it when made, and every handle opened later (in a DataLoader worker,
    or an epoch of BatchReader) must match it."""
    try:
        st = os.fstat(f.id.get_vfd_handle()) if f.driver == "sec2" else os.stat(path)
    except (OSError, RuntimeError, TypeError, ValueError):
        st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _check_identity(path, expected, found, owner="Dataset"):
    """RuntimeError when the file now open as ``path`` is not the one ``expected`` names: another
    file moved onto the name (a new inode or size), or the file rewritten in place (its time)."""
    if expected is None or found == expected:
        return
    what = "a new inode or size" if found[:3] != expected[:3] else "rewritten in place"
    raise RuntimeError(f"{path}: the file changed since this {owner} was opened ({what}): it holds another "
                       f"dataset now; make a new {owner}")



def _direct_read(dset):
    """How to read `dset`'s chunks without HDF5's filters: None when they cannot be (virtual,
    not chunked by whole rows, values wider than a byte, a filter other than shuffle and one
    deflate); else whether they are deflated."""
    if dset.is_virtual or dset.external or dset.chunks is None or dset.chunks[1:] != dset.shape[1:]:
        return None
    if dset.dtype.itemsize != 1:
        return None
    plist = dset.id.get_create_plist()
    filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
    if any(f not in (h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_DEFLATE) for f in filters):
        return None
    if filters.count(h5py.h5z.FILTER_DEFLATE) > 1:
        return None
    return h5py.h5z.FILTER_DEFLATE in filters


def _chunking(positions, legal_moves):
    """(the direct-read mode of each column or None, the rows a chunk holds) for ``_Reader``."""
    modes = [_direct_read(d) for d in (positions, legal_moves)]
    same_chunks = positions.chunks and legal_moves.chunks and positions.chunks[0] == legal_moves.chunks[0]
    deflated = modes if None not in modes and same_chunks else None
    return deflated, positions.chunks[0] if deflated else FALLBACK_CHUNK_ROWS

