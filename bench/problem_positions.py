"""Chess problems and studies as a FEN list for `evaluate --positions`: positions made by people,
off the path of random games (docs/benchmarks.md, "Positions made by people").

Reads the OLV files (one YAML document per problem) that Debian's `pychess` package ships in
/usr/share/pychess/learn/puzzles/ (get them without installing it: `apt-get download pychess &&
dpkg -x pychess_*.deb pychess`). Only the subset of YAML those files use is read, line by line:
`algebraic:` with `white: [...]` / `black: [...]`, `stipulation:` and `options:`.

Kept: orthodox problems (pieces K Q R B S P only, no fairy condition among `options`; a twin's
diagram position counts). Side to move: White, except helpmates (`h#N`: Black moves first).
Castling rights where king and rook stand on their squares (the problems' convention: castling
is allowed unless the position proves it is not), no en-passant square (allowed only when
proven). Positions python-chess does not accept as legal (`Board.status()`) and repeats are
dropped, and the counts of each reason go to stderr.
Usage: problem_positions.py FILE.olv... > problems.fen"""
import collections
import re
import sys

import chess

PIECES = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP, "S": chess.KNIGHT, "P": chess.PAWN}
# Options that change no rule: play that starts from the diagram is still orthodox chess.
HARMLESS_OPTIONS = {"setplay", "tries", "twins", "intended-solutions"}


def documents(path):
    """The lines of each YAML document of the file (documents are separated by `---`)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        doc = []
        for line in f:
            if line.rstrip() == "---":
                if doc:
                    yield doc
                doc = []
            else:
                doc.append(line.rstrip("\n"))
        if doc:
            yield doc


def parse(doc):
    """(white, black, stipulation, options) of one document, or None where a field is missing."""
    white = black = stipulation = None
    options, in_options = [], False
    for line in doc:
        m = re.match(r"\s+(white|black):\s*\[(.*)\]\s*$", line)
        if m:
            squares = [s.strip() for s in m.group(2).split(",") if s.strip()]
            if m.group(1) == "white":
                white = squares
            else:
                black = squares
            continue
        m = re.match(r"stipulation:\s*\"?([^\"]*)\"?\s*$", line)
        if m:
            stipulation = m.group(1).strip()
            continue
        if re.match(r"options:\s*$", line):
            in_options = True
            continue
        if in_options:
            m = re.match(r"\s+-\s*(.+)$", line)
            if m:
                options.append(m.group(1).strip().lower())
                continue
            in_options = False
    if white is None or black is None or stipulation is None:
        return None
    return white, black, stipulation, options


def board_of(white, black, stipulation):
    """The problem's position, or a reason it is not an orthodox one."""
    board = chess.Board(None)
    for color, pieces in ((chess.WHITE, white), (chess.BLACK, black)):
        for item in pieces:
            m = re.fullmatch(r"([KQRBSP])([a-h][1-8])", item)
            if not m:
                return "fairy piece or odd square"
            square = chess.parse_square(m.group(2))
            if board.piece_at(square):
                return "two pieces on a square"
            board.set_piece_at(square, chess.Piece(PIECES[m.group(1)], color))
    # Helpmates: Black moves first, unless the count of moves has a half move (h#2.5: White).
    black_first = stipulation.lower().startswith("h") and ".5" not in stipulation
    board.turn = chess.BLACK if black_first else chess.WHITE
    rights = ""
    for king, rook, right in (("e1", "h1", "K"), ("e1", "a1", "Q"), ("e8", "h8", "k"), ("e8", "a8", "q")):
        k, r = board.piece_at(chess.parse_square(king)), board.piece_at(chess.parse_square(rook))
        color = chess.WHITE if right.isupper() else chess.BLACK
        if k == chess.Piece(chess.KING, color) and r == chess.Piece(chess.ROOK, color):
            rights += right
    board.set_castling_fen(rights or "-")
    if board.status() != chess.STATUS_VALID:
        return "not a legal position"
    return board


def main(paths):
    if not paths or any(p in ("-h", "--help") for p in paths):
        print(__doc__, file=sys.stderr)
        return 2
    seen, dropped = set(), collections.Counter()
    for path in paths:
        for doc in documents(path):
            fields = parse(doc)
            if fields is None:
                dropped["no diagram or stipulation"] += 1
                continue
            white, black, stipulation, options = fields
            if any(o.split()[0] not in HARMLESS_OPTIONS for o in options):
                dropped["fairy condition"] += 1
                continue
            board = board_of(white, black, stipulation)
            if isinstance(board, str):
                dropped[board] += 1
                continue
            fen = board.fen()
            if fen in seen:
                dropped["repeat"] += 1
                continue
            seen.add(fen)
            print(fen)
    print(f"problem_positions: {len(seen)} positions; dropped: "
          + (", ".join(f"{n} {why}" for why, n in sorted(dropped.items())) or "none"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
