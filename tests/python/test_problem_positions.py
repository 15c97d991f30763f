"""bench/problem_positions.py on OLV documents written by hand: an orthodox direct mate becomes a
FEN with White to move and the castling rights its kings and rooks allow; a helpmate has Black to
move; fairy pieces, fairy conditions, illegal positions and repeats are dropped and counted."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "problem_positions.py")

OLV = """---
authors:
  - Loyd, Samuel
algebraic:
  white: [Ke1, Rh1, Ra1, Qd4, Pa2]
  black: [Ke8, Ra8, Pb7]
stipulation: "#2"
solution: |
  "1.Qd7+ ..."
---
algebraic:
  white: [Kg1, Bc4]
  black: [Kh8, Rf8, Pg7]
stipulation: "h#2"
options:
  - SetPlay
---
algebraic:
  white: [Kg1, Nc4]
  black: [Kh8]
stipulation: "#3"
---
algebraic:
  white: [Kg1, Qc4]
  black: [Kh8]
stipulation: "#3"
options:
  - Circe
---
algebraic:
  white: [Kg1, Qh7]
  black: [Kh8]
stipulation: "#1"
---
algebraic:
  white: [Ke1, Rh1, Ra1, Qd4, Pa2]
  black: [Ke8, Ra8, Pb7]
stipulation: "#3"
---
authors:
  - Nobody
"""


class ProblemPositions(unittest.TestCase):
    def run_script(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "set.olv")
            with open(path, "w") as f:
                f.write(text)
            return subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True, check=True)

    def test_positions_and_what_is_dropped(self):
        out = self.run_script(OLV)
        self.assertEqual(out.stdout.splitlines(), [
            "r3k3/1p6/8/8/3Q4/8/P7/R3K2R w KQq - 0 1",  # castling where king and rook are at home
            "5r1k/6p1/8/8/2B5/8/8/6K1 b - - 0 1",      # helpmate: Black first; SetPlay is no fairy rule
        ])
        # The nightrider (N), Circe, White's queen giving check with White to move (not legal),
        # the repeated diagram and the document without one.
        self.assertIn("problem_positions: 2 positions; dropped: 1 fairy condition, 1 fairy piece or odd square, "
                      "1 no diagram or stipulation, 1 not a legal position, 1 repeat", out.stderr)

    def test_usage_without_files(self):
        out = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("Usage: problem_positions.py", out.stderr)


if __name__ == "__main__":
    unittest.main()
