"""Differential test: gen_moves's rules against python-chess (PyPI `chess`), a second oracle beside
Stockfish (tests/chess/stockfish_diff_test.cpp). On seeded random positions, reached by random play
with python-chess from the start position and from tricky FENs (castling, en passant, promotions,
checks, pins), it compares legal move lists and perft counts, FEN round trips through
`--start-fen`, and where random games end. Standard chess only: Chess960 is not supported.

Usage: python_chess_diff.py [BIN_DIR] [unittest options]   (BIN_DIR defaults to $LEGALNET_BIN_DIR)
Exits non-zero on any mismatch, naming the first ones: the FEN and the moves only one side has."""
import concurrent.futures
import functools
import os
import random
import re
import subprocess
import sys
import unittest

import chess

BIN_DIR = os.environ.get("LEGALNET_BIN_DIR", "")
SHOWN = 5  # mismatches printed in full (the message counts them all)

# The chessprogramming wiki's perft positions 1-6 (4 also mirrored) and their published depth-3
# counts, which also check this file's own perft.
PUBLISHED = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 8902),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 97862),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 2812),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 9467),
    ("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 9467),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 62379),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 89890),
]

# Starting points for random play besides the start position: each puts a special rule within a
# few plies (Martin Sedlak's tricky perft positions among them).
TRICKY = [fen for fen, _ in PUBLISHED[1:]] + [
    "8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2",  # en passant would expose the king along the rank
    "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1",  # en passant with a bishop on the diagonal
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant beside another pawn
    "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",  # en passant takes the pawn that gives check
    "r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1",  # castling through attacked squares
    "r3k2r/8/3Q4/8/8/5q2/8/R3K2R b KQkq - 0 1",  # castling out of check
    "2K2r2/4P3/8/8/8/8/8/3k4 w - - 0 1",  # under-promotions, a rook on the promotion square
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",  # promotions with captures on both sides
    "4k3/8/8/q7/8/8/3N4/4K3 w - - 0 1",  # an absolutely pinned knight
    "3k4/3r4/8/8/8/3B4/3K4/8 w - - 0 1",  # a bishop pinned on a file: it cannot move at all
]


ROUND_TRIP_ARGS = ("--games", "1", "--max-plies", "1", "--seed", "1", "--quiet", "--out", "-", "--start-fen")
GAMES_ARGS = ("--games", "300", "--seed", "11", "--quiet", "--out", "-")


def gen_moves(*args):
    """Runs gen_moves; returns its stdout, or raises with its stderr."""
    exe = os.path.join(BIN_DIR, "gen_moves")
    proc = subprocess.run([exe, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"gen_moves {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


# Each gen_moves run is mostly its start-up, so every test's runs are queued at the first test and
# go on in the background, in the order the tests (alphabetical) consume them, while python-chess
# checks earlier results.
_POOL = None
_RUNS = {}


def runs(name):
    """The futures of test `name`'s gen_moves runs, started on first use with everyone else's."""
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
        perft = ("perft", "--fen")
        for key, arg_lists in [("placements", [PLACEMENT_ARGS]),
                               ("placement_games", [PLACEMENT_GAMES_ARGS]),
                               ("pressure_games", PRESSURE_GAMES_ARGS),
                               ("lopsided_games", [LOPSIDED_GAMES_ARGS]),
                               ("fen_round_trips", [ROUND_TRIP_ARGS + (f,) for f in round_trip_fens()]),
                               ("game_ends", [GAMES_ARGS]),
                               ("legal_moves", [perft + (b.fen(), "--depth", "2") for b in legal_boards()]),
                               ("perft3", [perft + (b.fen(), "--depth", "3") for b in perft3_boards()])]:
            _RUNS[key] = [_POOL.submit(gen_moves, *args) for args in arg_lists]
    return _RUNS[name]


# Random legal placements (gen_moves --start placement, and `gen_moves positions`).
PLACEMENT_ARGS = ("positions", "--start", "placement", "--count", "3000", "--seed", "11", "--out", "-")
PLACEMENT_GAMES_ARGS = ("--start", "placement", "--games", "60", "--seed", "5", "--out", "-")
# Games from lopsided material (gen_moves --start lopsided): a king and at most three pieces
# against five to fifteen.
LOPSIDED_GAMES_ARGS = ("--start", "lopsided", "--games", "60", "--seed", "5", "--max-plies", "20", "--out", "-")
# Games whose every ply presses the opponent's king (gen_moves --pressure 1), from the standard
# position and from placements.
PRESSURE_GAMES_ARGS = [("--games", "20", "--seed", "8", "--pressure", "1", "--max-plies", "40", "--out", "-"),
                       ("--start", "placement", "--games", "20", "--seed", "9", "--pressure", "1", "--max-plies", "20",
                        "--out", "-")]


def children(board):
    """The positions after each legal move of `board`."""
    for move in board.legal_moves:
        child = board.copy(stack=False)
        child.push(move)
        yield child


def king_pressure(board):
    """games/random_game.h's king_pressure by python-chess: 8 a checker of the side to move, 2 a
    pinned piece of it, 1 a square beside its king the opponent attacks with the king lifted off."""
    us = board.turn
    king = board.king(us)
    pinned = sum(1 for sq in chess.SquareSet(board.occupied_co[us]) if sq != king and board.is_pinned(us, sq))
    lifted = board.copy(stack=False)
    lifted.remove_piece_at(king)
    attacked = sum(1 for sq in chess.SquareSet(chess.BB_KING_ATTACKS[king]) if lifted.is_attacked_by(not us, sq))
    return 8 * len(board.checkers()) + 2 * pinned + attacked


def tearDownModule():
    """Drops the runs no test asked for (a test picked with -k)."""
    if _POOL is not None:
        _POOL.shutdown(cancel_futures=True)


def parse_divide(text):
    """Stockfish's divide format: 'uci: count' per legal move, a blank line, 'Nodes searched: N'.
    Returns ({uci: count}, N)."""
    counts, total = {}, None
    for line in text.splitlines():
        if m := re.fullmatch(r"([a-h][1-8][a-h][1-8][qrbn]?): (\d+)", line):
            if m.group(1) in counts:
                raise ValueError(f"move {m.group(1)} listed twice")
            counts[m.group(1)] = int(m.group(2))
        elif m := re.fullmatch(r"Nodes searched: (\d+)", line):
            total = int(m.group(1))
        elif line:
            raise ValueError(f"unexpected perft line {line!r}")
    if total is None:
        raise ValueError("no 'Nodes searched' line")
    return counts, total


def divide_depth2(board):
    """python-chess's divide at depth 2: {uci: number of legal replies}."""
    counts = {}
    for move in board.legal_moves:
        board.push(move)
        counts[move.uci()] = board.legal_moves.count()
        board.pop()
    return counts


def perft(board, depth):
    if depth == 1:
        return board.legal_moves.count()
    nodes = 0
    for move in board.legal_moves:
        board.push(move)
        nodes += perft(board, depth - 1)
        board.pop()
    return nodes


def has_pin(board):
    return any(board.is_pinned(board.turn, sq) for sq in board.pieces(chess.KNIGHT, board.turn)
               | board.pieces(chess.BISHOP, board.turn) | board.pieces(chess.ROOK, board.turn)
               | board.pieces(chess.QUEEN, board.turn) | board.pieces(chess.PAWN, board.turn))


def is_special(board, moves):
    return (board.is_check() or board.has_legal_en_passant() or has_pin(board)
            or any(m.promotion or board.is_castling(m) for m in moves))


def biased_choices(board, moves, rng):
    """The moves random play picks among: half the time the double pawn pushes that land beside
    an enemy pawn (en passant follows), a fifth of the time the checks, where there are any."""
    r = rng.random()
    if r < 0.5:
        enemy_pawns = board.pieces_mask(chess.PAWN, not board.turn)
        beside = chess.shift_left(enemy_pawns) | chess.shift_right(enemy_pawns)
        chosen = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN
                  and abs(m.to_square - m.from_square) == 16
                  and chess.BB_SQUARES[m.to_square] & beside]
    elif r < 0.7:
        chosen = [m for m in moves if board.gives_check(m)]
    else:
        chosen = []
    return chosen or moves


PER_GAME = 6  # positions kept from one game at most, so that every start is used


def sample_boards(seed, count):
    """`count` distinct positions from seeded random games: a position with a legal en-passant
    capture is always kept, one where another special rule applies with probability 1/2, any
    other with 1/25, at most PER_GAME from a game. Random play favours double pushes and checks
    (biased_choices); games from the tricky FENs are short, so that their rules stay in play."""
    rng = random.Random(seed)
    starts = [chess.STARTING_FEN] + TRICKY
    boards, seen = [], set()
    for game in range(100000):
        start = starts[game % len(starts)]
        board = chess.Board(start)
        kept = 0
        for _ in range(400 if start == chess.STARTING_FEN else 24):
            moves = list(board.legal_moves)
            keep = 1 if board.has_legal_en_passant() else 0.5 if is_special(board, moves) else 0.04
            fen = board.fen(en_passant="fen")
            if rng.random() < keep and fen not in seen and kept < PER_GAME:
                seen.add(fen)
                kept += 1
                boards.append(board.copy(stack=False))
                if len(boards) == count:
                    return boards
            if not moves:
                break
            board.push(rng.choice(biased_choices(board, moves, rng)))
    raise AssertionError("random play found too few positions")


@functools.cache
def legal_boards():
    return sample_boards(seed=2024, count=200)


@functools.cache
def perft3_boards():
    return [chess.Board(fen) for fen, _ in PUBLISHED] + sample_boards(seed=77, count=24)


@functools.cache
def round_trip_fens():
    """Random positions written with the en-passant square after every double push, and cases
    for each FEN convention and for games over at the start."""
    return [b.fen(en_passant="fen") for b in sample_boards(seed=5, count=40)] + [
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",  # square shown, no capture
        "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",  # a legal capture
        "8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2",  # the capture would expose the king: dropped
        "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",  # the capture takes the checking pawn: kept
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3",  # no counters
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",  # fullmove 0
        "4k3/8/8/8/8/8/8/R3K3 w - - 70000 300",  # halfmove clock beyond 16 bits
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # checkmate: no plies
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",  # stalemate
        "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1",  # bishops on both colours: not insufficient
        "4k3/8/8/8/8/8/8/3BKB2 w - - 0 1",  # bishops on one colour: insufficient
        "4k3/8/8/8/8/8/8/R3K3 w Q - 150 90",  # seventy-five-move rule at once
    ]


def report(what, mismatches, total):
    """The failure message: how many differ, and the first SHOWN in full."""
    lines = [f"{len(mismatches)} of {total} {what} differ; the first {min(SHOWN, len(mismatches))}:"]
    lines += mismatches[:SHOWN]
    return "\n".join(lines)


def move_set_diff(fen, ours, theirs):
    """One mismatch line for two move sets, or None when they are equal."""
    if ours == theirs:
        return None
    return (f"  FEN {fen}\n    only in gen_moves:   {' '.join(sorted(ours - theirs)) or '-'}\n"
            f"    only in python-chess: {' '.join(sorted(theirs - ours)) or '-'}")


# ---------------------------------------------------------------------------------------------
# PGN as gen_moves writes it: tag pairs, a blank line, SAN movetext ending with the result.

TAG = re.compile(r'\[(\w+) "((?:[^"\\]|\\.)*)"\]')
MOVE_NUMBER = re.compile(r"\d+\.(\.\.)?")
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")

# gen_moves's Termination tag for each python-chess ending.
TERMINATION_NAMES = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.SEVENTYFIVE_MOVES: "seventy-five-move rule",
    chess.Termination.FIVEFOLD_REPETITION: "fivefold repetition",
}


def parse_pgn(text):
    """Returns [(tags, [san...], result)] for gen_moves's output."""
    games, tags, tokens = [], {}, []
    for line in text.splitlines() + [""]:
        if m := TAG.fullmatch(line):
            if tokens:
                raise ValueError(f"tag after movetext: {line!r}")
            tags[m.group(1)] = m.group(2)
        elif line:
            tokens += [t for t in line.split() if not MOVE_NUMBER.fullmatch(t)]
        elif tokens:
            if tokens[-1] not in RESULTS:
                raise ValueError(f"game {tags.get('Round')} does not end with a result: {tokens[-1]!r}")
            games.append((tags, tokens[:-1], tokens[-1]))
            tags, tokens = {}, []
    if tags:
        raise ValueError("tags without movetext at the end")
    return games


def game_mismatch(tags, sans, result, max_plies):
    """Replays one gen_moves game with python-chess; returns what is wrong with it, or None.
    Every move must be legal and written as python-chess writes its SAN; no position before
    the last may be over by is_game_over(); the last must be over exactly as Result and
    Termination say, or, at the ply limit, not over with Result '*' and 'max plies'."""
    board = chess.Board(tags.get("FEN", chess.STARTING_FEN))
    where = f"game {tags.get('Round')} (seed {tags.get('Seed')})"
    for ply, san in enumerate(sans):
        if board.is_game_over():
            return f"{where}: over ({board.outcome().termination.name}) before ply {ply + 1} at {board.fen()}"
        try:
            move = board.parse_san(san)
        except ValueError as e:
            return f"{where}: ply {ply + 1} {san!r} is not legal at {board.fen()} ({e})"
        if board.san(move) != san:
            return (f"{where}: ply {ply + 1} written {san!r}, python-chess writes {board.san(move)!r}"
                    f" at {board.fen()}")
        board.push(move)
    if tags.get("PlyCount") != str(len(sans)):
        return f"{where}: PlyCount {tags.get('PlyCount')} but {len(sans)} moves"
    outcome = board.outcome()
    if outcome is None:
        expected = ("*", "max plies")
        if max_plies == 0 or len(sans) != max_plies:
            return f"{where}: stopped after {len(sans)} plies, not over, at {board.fen()}"
    else:
        expected = (outcome.result(), TERMINATION_NAMES[outcome.termination])
    found = (result, tags.get("Termination", "(no tag)"))
    if tags.get("Result") != result:
        return f"{where}: Result tag {tags.get('Result')} but movetext ends with {result}"
    if found != expected:
        return f"{where}: ends {found}, python-chess says {expected} at {board.fen()}"
    return None


# ---------------------------------------------------------------------------------------------

class PythonChessDiff(unittest.TestCase):
    def assert_none(self, mismatches, message):
        if mismatches:
            self.fail(message)

    def test_legal_moves_of_random_positions(self):
        """gen_moves's divide at depth 2 against python-chess: the set of legal moves (exact), and
        each move's number of legal replies, so one process start checks ~30 positions' counts."""
        boards, futures = legal_boards(), runs("legal_moves")
        # The sample must exercise every special rule, or agreeing proves little.
        coverage = dict(en_passant=0, promotions=0, castling=0, checks=0, pins=0)
        set_diffs, count_diffs = [], []
        for board, future in zip(boards, futures):
            theirs = divide_depth2(board)
            ours, total = parse_divide(future.result())
            if diff := move_set_diff(board.fen(), set(ours), set(theirs)):
                set_diffs.append(diff)
            wrong = [f"{m} {ours[m]}/{theirs[m]}" for m in sorted(ours.keys() & theirs.keys())
                     if ours[m] != theirs[m]]
            if wrong or total != sum(ours.values()):
                count_diffs.append(f"  FEN {board.fen()}\n    replies gen_moves/python-chess: {' '.join(wrong)}"
                                   f"\n    Nodes searched {total}, sum of the lines {sum(ours.values())}")
            moves = list(board.legal_moves)
            coverage["en_passant"] += sum(board.is_en_passant(m) for m in moves)
            coverage["promotions"] += sum(m.promotion is not None for m in moves)
            coverage["castling"] += sum(board.is_castling(m) for m in moves)
            coverage["checks"] += board.is_check()
            coverage["pins"] += has_pin(board)
        self.assert_none(set_diffs, report("legal move sets", set_diffs, len(boards)))
        self.assert_none(count_diffs, report("depth-2 divides", count_diffs, len(boards)))
        for rule, minimum in dict(en_passant=15, promotions=80, castling=30, checks=40, pins=20).items():
            self.assertGreaterEqual(coverage[rule], minimum, f"too few {rule} in the sample: {coverage}")

    def test_perft3_of_published_and_random_positions(self):
        boards, futures = perft3_boards(), runs("perft3")
        diffs = []
        for i, (board, future) in enumerate(zip(boards, futures)):
            fen = board.fen()
            theirs = perft(board, 3)
            ours = parse_divide(future.result())[1]
            published = PUBLISHED[i][1] if i < len(PUBLISHED) else theirs
            if not ours == theirs == published:
                diffs.append(f"  FEN {fen}\n    perft 3: gen_moves {ours}, python-chess {theirs}"
                             + (f", published {published}" if i < len(PUBLISHED) else ""))
        self.assert_none(diffs, report("perft 3 counts", diffs, len(boards)))

    def test_fen_round_trips(self):
        """gen_moves --start-fen F writes F back in its FEN tag; it must be python-chess's
        board.fen() of F. Conventions: both write the en-passant square only when an en-passant
        capture is legal (python-chess's default en_passant="legal"; the input F here carries it
        after every double push, en_passant="fen"), both read missing counters as '0 1' and a
        fullmove number of 0 as 1, and both keep any halfmove clock a FEN can hold exactly (once
        gen_moves kept 16 bits and wrote 65535 for more). They differ in one way, compared
        accordingly: --start-fen refuses castling rights whose king or rook has left its square
        where python-chess silently drops them (`gen_moves perft --fen` drops them too, with a
        note, as checked below)."""
        cases, futures = round_trip_fens(), runs("fen_round_trips")
        diffs = []
        for fen, future in zip(cases, futures):
            board = chess.Board(fen)
            self.assertTrue(board.is_valid(), f"case {fen!r} is not a valid position: {board.status()!r}")
            [(tags, sans, result)] = parse_pgn(future.result())
            expected = board.fen()
            if tags.get("SetUp") != "1" or tags.get("FEN") != expected:
                diffs.append(f"  FEN {fen}\n    gen_moves writes   {tags.get('FEN')}"
                             f" (SetUp {tags.get('SetUp')})"
                             f"\n    python-chess writes {expected}")
            elif problem := game_mismatch(tags, sans, result, max_plies=1):
                diffs.append(f"  FEN {fen}\n    {problem}")
        self.assert_none(diffs, report("FEN round trips", diffs, len(cases)))

    def test_void_castling_rights(self):
        fen = "r3k2r/8/8/8/8/8/8/R3K1R1 w KQkq - 0 1"  # the h1 rook has left: K is void
        self.assertEqual(chess.Board(fen).fen(), "r3k2r/8/8/8/8/8/8/R3K1R1 w Qkq - 0 1")
        proc = subprocess.run([os.path.join(BIN_DIR, "gen_moves"), "--start-fen", fen, "--games", "1",
                               "--out", "-"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(proc.stderr, "gen_moves: FEN field 3: castling right 'K' but the king or rook "
                                      "is not on its square\n")
        ours, _ = parse_divide(gen_moves("perft", "--depth", "1", "--fen", fen))
        theirs = {m.uci() for m in chess.Board(fen).legal_moves}
        self.assertIsNone(move_set_diff(fen, set(ours), theirs))

    def test_random_placements(self):
        """Every placement is a valid position for python-chess, written as python-chess writes it,
        the sample covers every situation of evaluate's report card, and the positions one ply
        below all 3,000 (gen_moves positions --depth 1 over the list) are python-chess's."""
        fens = runs("placements")[0].result().splitlines()
        self.assertEqual(len(fens), len(set(fens)))  # a set: duplicates are written once
        self.assertGreater(len(fens), 2900)
        coverage = dict(check=0, double_check=0, en_passant=0, castling=0, castling_right_unusable=0, promotion=0,
                        many_queens=0, no_legal_move=0, pins=0)
        children, bad = set(), []
        for fen in fens:
            board = chess.Board(fen)
            if board.status() != chess.STATUS_VALID or board.fen() != fen:
                bad.append(f"  FEN {fen}: status {board.status()!r}, python-chess writes {board.fen()}")
                continue
            moves = list(board.legal_moves)
            coverage["check"] += board.is_check()
            coverage["double_check"] += len(board.checkers()) == 2
            coverage["en_passant"] += any(board.is_en_passant(m) for m in moves)
            coverage["castling"] += any(board.is_castling(m) for m in moves)
            coverage["castling_right_unusable"] += bool(board.castling_rights & board.occupied_co[board.turn]) and not any(
                board.is_castling(m) for m in moves)
            coverage["promotion"] += any(m.promotion for m in moves)
            coverage["many_queens"] += len(board.pieces(chess.QUEEN, chess.WHITE) | board.pieces(chess.QUEEN, chess.BLACK)) >= 3
            coverage["no_legal_move"] += not moves
            coverage["pins"] += has_pin(board)
            children.add(fen)
            for m in moves:
                board.push(m)
                children.add(board.fen())
                board.pop()
        self.assert_none(bad, report("placements", bad, len(fens)))
        for situation, minimum in dict(check=900, double_check=150, en_passant=90, castling=130,
                                       castling_right_unusable=450, promotion=400, many_queens=200,
                                       no_legal_move=40, pins=130).items():
            self.assertGreaterEqual(coverage[situation], minimum, f"too few {situation}: {coverage}")
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".fen") as f:
            f.write("\n".join(fens) + "\n")
            f.flush()
            ours = set(gen_moves("positions", "--start", f.name, "--depth", "1", "--out", "-").splitlines())
        only_ours, only_theirs = sorted(ours - children), sorted(children - ours)
        self.assert_none(only_ours or only_theirs, f"one ply below the placements: {len(only_ours)} positions only "
                         f"gen_moves reaches ({only_ours[:SHOWN]}), {len(only_theirs)} only python-chess reaches "
                         f"({only_theirs[:SHOWN]})")

    def test_games_from_placements(self):
        """gen_moves --start placement: each game starts from its FEN tag and plays by the rules."""
        games = parse_pgn(runs("placement_games")[0].result())
        self.assertEqual(len(games), 60)
        self.assertEqual({tags.get("SetUp") for tags, _, _ in games}, {"1"})
        self.assertEqual(len({tags["FEN"] for tags, _, _ in games}), 60)
        diffs = [p for tags, sans, result in games if (p := game_mismatch(tags, sans, result, max_plies=0))]
        self.assert_none(diffs, report("games from placements", ["  " + d for d in diffs], len(games)))

    def test_games_from_lopsided_starts(self):
        """gen_moves --start lopsided: each start valid for python-chess, one side at most four
        pieces with its king against six to sixteen, and each game by the rules."""
        games = parse_pgn(runs("lopsided_games")[0].result())
        self.assertEqual(len(games), 60)
        bad = []
        for tags, _, _ in games:
            board = chess.Board(tags["FEN"])
            few, many = sorted(chess.popcount(board.occupied_co[c]) for c in chess.COLORS)
            if board.status() != chess.STATUS_VALID or few > 4 or not 6 <= many <= 16:
                bad.append(f"  {tags['FEN']}: status {board.status()!r}, {few} against {many} pieces")
        self.assert_none(bad, report("lopsided starts", bad, len(games)))
        diffs = [p for tags, sans, result in games if (p := game_mismatch(tags, sans, result, max_plies=20))]
        self.assert_none(diffs, report("games from lopsided starts", ["  " + d for d in diffs], len(games)))

    def test_pressure_games_press_hardest_at_every_ply(self):
        """gen_moves --pressure 1: games by the rules where every move leaves the opponent's king
        under the highest king_pressure any legal move gives, as python-chess counts it."""
        misses, played = [], 0
        for run, args in zip(runs("pressure_games"), PRESSURE_GAMES_ARGS):
            games = parse_pgn(run.result())
            self.assertEqual(len(games), 20)
            max_plies = int(args[args.index("--max-plies") + 1])
            diffs = [p for tags, sans, result in games if (p := game_mismatch(tags, sans, result, max_plies=max_plies))]
            self.assert_none(diffs, report("pressure games", ["  " + d for d in diffs], len(games)))
            for tags, sans, _ in games:
                self.assertEqual(tags["White"], "random, pressure 1")
                board = chess.Board(tags.get("FEN", chess.STARTING_FEN))
                for san in sans:
                    move = board.parse_san(san)
                    best = max(king_pressure(child) for child in children(board))
                    before = board.fen()
                    board.push(move)
                    played += 1
                    if (pressure := king_pressure(board)) != best:
                        misses.append(f"  {move.uci()} from {before}: pressure {pressure}, best {best}")
        self.assertGreater(played, 500)
        self.assert_none(misses, report("pressing moves", misses, played))

    def test_game_ends_of_300_random_games(self):
        """gen_moves's help says 'Games end by python-chess's is_game_over() rules'."""
        games = parse_pgn(runs("game_ends")[0].result())
        self.assertEqual(len(games), 300)
        diffs = [p for tags, sans, result in games if (p := game_mismatch(tags, sans, result, max_plies=0))]
        self.assert_none(diffs, report("games", ["  " + d for d in diffs], len(games)))
        endings = {tags["Termination"] for tags, _, _ in games}
        self.assertGreaterEqual(endings, {"checkmate", "stalemate", "insufficient material",
                                          "seventy-five-move rule"})


def main():
    global BIN_DIR
    argv = sys.argv[:]
    if len(argv) > 1 and not argv[1].startswith("-"):
        BIN_DIR = argv.pop(1)
    if not os.access(os.path.join(BIN_DIR, "gen_moves"), os.X_OK):
        sys.exit(f"python_chess_diff.py: no gen_moves in '{BIN_DIR}': pass the bin folder"
                 " or set LEGALNET_BIN_DIR")
    unittest.main(argv=argv)


if __name__ == "__main__":
    main()
