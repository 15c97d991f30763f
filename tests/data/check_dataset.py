"""Reads a legalnet dataset with plain h5py, as a user would, and checks it against the boards
the C++ side expects. Usage: check_dataset.py DATASET EXPECTED_FENS

EXPECTED_FENS holds one FEN per row. This script rebuilds each row's FEN from the planes and
the state columns, with no legalnet code, so the file is proven self-describing."""
import sys

import h5py
import numpy as np

PIECES = "PNBRQK"


def fen_of(planes, castling, en_passant, halfmove, fullmove):
    ranks = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            letter = ""
            for p in range(6):
                v = planes[1 + p, rank, file]
                if v:
                    letter = PIECES[p] if v > 0 else PIECES[p].lower()
            if letter:
                row += (str(empty) if empty else "") + letter
                empty = 0
            else:
                empty += 1
        ranks.append(row + (str(empty) if empty else ""))
    side = "w" if planes[0, 0, 0] > 0 else "b"
    assert (planes[0] == planes[0, 0, 0]).all(), "plane 0 is not uniform"
    rights = "".join(c for bit, c in zip((1, 2, 4, 8), "KQkq") if castling & bit) or "-"
    ep = "-" if en_passant < 0 else "abcdefgh"[en_passant % 8] + str(en_passant // 8 + 1)
    return f"{'/'.join(ranks)} {side} {rights} {ep} {halfmove} {fullmove}"


def main(path, expected_path):
    expected = open(expected_path).read().split("\n")[:-1]
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "legalnet-dataset", f.attrs["format"]
        assert f.attrs["format_version"] == 1
        n = len(expected)
        assert f.attrs["num_positions"] == n
        assert f["positions"].shape == (n, 7, 8, 8) and f["positions"].dtype == np.int8
        assert f["legal_moves"].shape == (n, 4096) and f["legal_moves"].dtype == np.uint8
        # Byte-wide columns are deflated without the shuffle filter, which cannot reorder one byte.
        assert f["positions"].compression == "gzip" and f["legal_moves"].compression == "gzip"
        assert f["legal_moves"].chunks[1] == 4096
        for name in ("played_move", "game", "ply", "castling", "en_passant", "halfmove_clock", "fullmove_number"):
            assert f[name].shape == (n,), name
        planes = f["positions"][:]
        masks = f["legal_moves"][:]
        cols = {k: f[k][:] for k in ("castling", "en_passant", "halfmove_clock", "fullmove_number", "played_move")}
        for i in range(n):
            got = fen_of(planes[i], cols["castling"][i], cols["en_passant"][i], cols["halfmove_clock"][i],
                         cols["fullmove_number"][i])
            assert got == expected[i], f"row {i}: {got} != {expected[i]}"
            played = cols["played_move"][i]
            assert played < 0 or masks[i, played] == 1, f"row {i}: played move not legal"
        games = f["games"]
        # Self-describing: every dataset says what it holds.
        for name, dataset in list(f.items()) + list(games.items()):
            if isinstance(dataset, h5py.Dataset):
                text = dataset.attrs.get("description")
                assert isinstance(text, (str, bytes)) and len(text) > 10, f"{name}: no description"
        first, count = games["first_row"][:], games["num_rows"][:]
        assert (np.cumsum(count)[:-1] == first[1:]).all()
        assert (f["game"][:] == np.repeat(np.arange(len(first)), count)).all()
    print(f"ok: {n} rows")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
