#!/usr/bin/env python3
"""The oracle of tests/games/placement_test.cpp's MaterialClass counts: python-chess's
Board.is_valid() over every placement of the two kings and one more piece, white to move, no
castling, no en passant. About two minutes; run by hand with the project's Python:
    "$(scripts/python-env)/bin/python" tests/games/material_classes.py"""
import chess

total = 0
for symbol in "PNBRQpnbrq":
    count = 0
    for white_king in range(64):
        for black_king in range(64):
            if black_king == white_king:
                continue
            for square in range(64):
                if square in (white_king, black_king):
                    continue
                board = chess.Board(None)
                board.set_piece_at(white_king, chess.Piece(chess.KING, chess.WHITE))
                board.set_piece_at(black_king, chess.Piece(chess.KING, chess.BLACK))
                board.set_piece_at(square, chess.Piece.from_symbol(symbol))
                count += board.is_valid()
    total += count
    print(symbol, count, flush=True)
print("total", total)
