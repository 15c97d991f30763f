"""The renames of a run's outputs that a kill cut between two of them, completed before a file is
read, as the C++ readers do (lib/util/output_group.cpp): a tool that writes several outputs
(tensorize --split's parts, gen_moves' PGN and report) records in each one's lock file, before
its first rename, the list of its renames ("legalnet-commit 1", then each temporary and target,
each ended by a NUL). A journal is acted on only when every target it lists holds the same one
in its own lock file, and only temporaries named as the tools name them are moved: a file
planted beside an input can never make a reader move anything else. Also the folder sync after a
rename that model_file's writers use, as util/files.cpp's sync_folder."""
import errno
import os
import re
import stat

try:
    import fcntl
except ImportError:  # not a POSIX system: no tool of this package's wrote there
    fcntl = None

HEADER = b"legalnet-commit 1\0"
MAX_BYTES = 1 << 20
MAX_RENAMES = 64


def _parse(journal):
    """[(temporary, target)] of a journal, or [] when it is not one the tools wrote."""
    if not journal.startswith(HEADER) or not journal.endswith(b"\0"):
        return []
    names = journal[len(HEADER):-1].split(b"\0")
    if len(names) % 2 or len(names) > 2 * MAX_RENAMES or not all(names):
        return []
    renames = list(zip(names[::2], names[1::2]))
    for temp, target in renames:
        if not temp.startswith(target + b".tmp.") or not re.fullmatch(rb"[0-9]+\.[0-9]+", temp[len(target) + 5:]):
            return []
    return renames


def _open_lock(path):
    """A lock file's descriptor, never through a link nor waiting on a FIFO; None when there is none."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _read(fd):
    data = b""
    while len(data) <= MAX_BYTES:
        part = os.pread(fd, 65536, len(data))
        if not part:
            break
        data += part
    return data


def _sync(fd, name):
    """fsync, where the file system has it (EINVAL: some network and FUSE ones do not)."""
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise OSError(e.errno, f"cannot sync: {e.strerror}", name) from None


def _sync_folder(folder):
    """Syncs a folder after a rename in it, so that the new name survives a crash: as
    util/files.cpp's sync_folder (a folder that cannot be opened to read is left as it is)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        _sync(fd, folder)
    finally:
        os.close(fd)


def complete_interrupted_commit(path):
    """Completes the renames onto `path` and its run's other outputs that an interrupted run
    listed in ``path + ".lock"``; nothing when there is none. A live run holding the lock is
    waited for. RuntimeError naming the files when a rename fails."""
    if fcntl is None:
        return
    path = os.fsencode(path)
    if os.path.islink(path):  # the tools write through a link the user names: the lock is beside the file
        path = os.path.realpath(path)
    fd = _open_lock(path + b".lock")
    if fd is None:
        return
    others = []
    try:
        if os.fstat(fd).st_size == 0:
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        st = os.fstat(fd)
        journal = _read(fd) if st.st_nlink else b""
        renames = _parse(journal)

        def is_this_lock(target):  # by device and inode: any spelling of it
            try:
                other = os.lstat(target + b".lock")
            except OSError:
                return False
            return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)

        if not any(is_this_lock(target) for _, target in renames):
            return
        for _, target in renames:
            if is_this_lock(target):
                continue
            other = _open_lock(target + b".lock")
            if other is None:
                return
            others.append(other)
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return
            if _read(other) != journal:
                return
        for temp, target in renames:
            try:
                if not stat.S_ISREG(os.lstat(temp).st_mode):
                    continue
            except FileNotFoundError:
                continue  # renamed before the kill
            try:
                os.rename(temp, target)
            except OSError as e:
                raise RuntimeError(f"{os.fsdecode(path)}: cannot finish the renames an interrupted run listed "
                                   f"in its lock file: {os.fsdecode(temp)!r} to {os.fsdecode(target)!r}: "
                                   f"{e.strerror}") from None
            _sync_folder(os.path.dirname(target) or b".")
        for _, target in renames:  # done: the lock files go, as the run would have removed them
            try:
                os.unlink(target + b".lock")
            except OSError:
                pass
    finally:
        for other in others:
            os.close(other)
        os.close(fd)
