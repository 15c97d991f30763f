"""Squares and the board's geometry, the package's leaf module (it imports nothing of legalnet):
square = rank * 8 + file (a1 = 0, h8 = 63), the 8 queen-line directions and the 8 knight jumps,
in lib/encode/encode.h's order (N, NE, E, SE, S, SW, W, NW). moves, fen and attacks build on it."""

FILES = "abcdefgh"

DIRECTIONS = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]  # (file, rank) steps
KNIGHT_JUMPS = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]


def square_name(square):
    return FILES[square % 8] + str(square // 8 + 1)


def parse_square(name):
    if len(name) != 2 or name[0] not in FILES or name[1] not in "12345678":
        raise ValueError(f"not a square: {name!r}")
    return (int(name[1]) - 1) * 8 + FILES.index(name[0])
