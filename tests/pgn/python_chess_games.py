"""python_chess_games.py FILE...: the main line of every game python-chess reads from each PGN
file, in UCI, one game a line; games without moves (python-chess makes one of a stray line) are
left out. The PGN reader's tests compare their own reading with it."""
import io
import sys

import chess.pgn

for path in sys.argv[1:]:
    with open(path, encoding="utf-8", errors="replace") as f:
        handle = io.StringIO(f.read())
    while (game := chess.pgn.read_game(handle)) is not None:
        moves = [move.uci() for move in game.mainline_moves()]
        if moves and not game.errors:
            print(" ".join(moves))
