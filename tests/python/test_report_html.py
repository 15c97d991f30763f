"""scripts/report-html on a report.json written by hand: the verdict (clean games, the illegal
rate overall and in check, the plies, against the random mover and the adversary; the exact sets
of every set, named for what it is; the search) at the top of the page with its intervals and what
each figure is over; text from the report escaped; a figure that is not a number refused with one
line, leaving no page. tests/report/ renders the page in a browser and measures the first screen."""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "report-html")
HOSTILE = '<script>alert("x")</script><img src=http://example.com/x>'

REPORT = {
    "tool": "evaluate", "version": "0.0 (test)", "command_line": "evaluate " + HOSTILE,
    "model": {"path": "runs/" + HOSTILE, "description": "resnet " + HOSTILE, "inputs": "state",
              "inputs_from_move_generator": False, "inputs_description": HOSTILE, "parameters": 1234,
              "training": {"command_line": "train " + HOSTILE}},
    "options": {"threshold": 0.5, "max_positions": 20000, "data": ["data/" + HOSTILE + ".h5"]},
    "dataset": {
        "positions": 20000, "rows_in_data": 357899, "bce": 0.00123, "precision": 0.99912, "recall": 0.99876,
        "exact_set_accuracy": 0.98502, "exact_set_95ci": [0.98331, 0.98658],
        "by_move_kind": {HOSTILE: {"recall": 1.0, "precision": 1.0, "legal_moves": 3, "predicted": 3}},
        "false_positives": {HOSTILE: {"count": 2, "share": 1.0}},
        "illegal_mass_by_position": {"in check": {"positions": 7, "mean_illegal_mass": 0.01,
                                                  "share_of_all_illegal_mass": 0.5}},
        "rare_moves_whole_set": {"positions_scanned": 357899, "positions_with_castling_or_en_passant": 900,
                                 "castling": {"recall": 0.997, "legal_moves": 1000},
                                 "en_passant": {"recall": 0.996, "legal_moves": 250}},
    },
    "games": {
        "games": 1200, "opponent": "random", "sampling": "multinomial over sigmoid outputs",
        "clean_games": 912, "clean_games_share": 0.76, "clean_games_95ci": [0.7350, 0.7834],
        "mean_plies_before_first_illegal": 301.25, "mean_plies_95ci": [290.5, 312.0],
        "model_picks": 214000, "illegal_picks": 351, "illegal_rate_per_pick": 0.00164,
        "illegal_rate_95ci": [0.001478, 0.001821], "illegal_rate_95ci_over_games": [0.00102, 0.00226],
        "worst_game": {"game": 17, "illegal_picks": 41, "model_picks": 180},
        "picks_in_check": 17000, "illegal_picks_in_check": 214, "illegal_rate_in_check": 0.01259,
        "illegal_rate_in_check_95ci": [0.01102, 0.01437],
        "picks_not_in_check": 197000, "illegal_picks_not_in_check": 137, "illegal_rate_not_in_check": 0.000696,
        "illegal_rate_not_in_check_95ci": [0.000588, 0.000822],
        "illegal_picks_leaving_king_in_check": 215,
        "illegal_picks_by_reason": {"not a move of that piece": 90, "blocked": 40,
                                    "leaves or puts own king in check": 215, HOSTILE: 6},
    },
    "gallery": [{"name": "blocked", "title": HOSTILE, "picture": "",
                 "mistakes": [{"fen": HOSTILE, "move": "a1a3", "probability": 0.9, "reason": HOSTILE,
                               "where": HOSTILE}]}],
}


class Page(HTMLParser):
    """The page's tags, the text of each element with an id, the text of each element with an id
    whole (`texts`), and the rows of the verdict's table of exact sets."""
    def __init__(self):
        super().__init__()
        self.tags, self.figures, self.current, self.rows, self.table = set(), {}, None, [], None
        self.open, self.texts = [], {}

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.current = dict(attrs).get("id")
        if tag not in ("br", "img"):
            self.open.append((tag, self.current))
            if self.current:
                self.texts[self.current] = ""
        if tag == "table":
            self.table = self.current
        if tag == "tr" and self.table == "verdict-exact":
            self.rows.append("")

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop()[0] == tag:
                break
        if tag == "table":
            self.table = None

    def handle_data(self, text):
        if self.current:
            self.figures[self.current] = text
            self.current = None
        for _, element in self.open:
            if element:
                self.texts[element] += text
        if self.table == "verdict-exact" and self.rows:
            self.rows[-1] += text


class ReportHtml(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.folder)

    def render(self, report):
        with open(os.path.join(self.folder, "report.json"), "w") as f:
            json.dump(report, f)
        return subprocess.run([sys.executable, SCRIPT, self.folder], capture_output=True, text=True)

    def page(self):
        with open(os.path.join(self.folder, "report.html")) as f:
            return f.read()

    def test_the_verdict_opens_the_page_with_its_intervals(self):
        done = self.render(REPORT)
        self.assertEqual(done.returncode, 0, done.stderr)
        text = self.page()
        page = Page()
        page.feed(text)
        self.assertEqual(page.figures["clean"], "76.0%")
        self.assertEqual(page.figures["illegal"], "0.164%")
        self.assertEqual(page.figures["illegal-in-check"], "1.259%")
        self.assertEqual(page.figures["illegal-not-in-check"], "0.070%")
        self.assertEqual(page.figures["plies"], "301.2")
        self.assertEqual(page.figures["exact"], "98.50%")
        games = page.texts["verdict-games"]
        self.assertIn("Against the random mover", games)
        self.assertIn("912 of 1,200 ended by the rules with no illegal pick; 95% interval 73.5% – 78.3%", games)
        self.assertIn("351 of 214,000 picks; 95% interval 0.148% – 0.182%; over games 95% interval 0.102% – 0.226%; "
                      "41 in game 17, the most in one game", games)
        self.assertEqual(page.figures["worst-game"], "41 in game 17")
        self.assertIn("1.259% (214 of 17,000; 95% interval 1.102% – 1.437%)", games)
        self.assertIn("301.2 plies before the first illegal pick (95% interval 290.5 – 312.0)", games)
        self.assertIn("By reason: not a move of that piece 90, blocked 40, leaves or puts own king in check 215, "
                      '<script>alert("x")</script>', games)  # the hostile name as text (asserted below)
        # No adversary games: said so, with how to play them.
        self.assertIn("Not played (evaluate --adversary-games N)", page.texts["verdict"])
        exact = next(r for r in page.rows if r.startswith("held-out game positions"))
        self.assertIn("the first 20000 of 357899 rows of data/<script>alert", exact)  # text, not a tag
        self.assertIn("20,000" "300" "98.50%" "98.33% – 98.66%", exact)
        # The verdict comes first: before the curves, the galleries and every other table.
        self.assertLess(text.index('<section id="verdict">'), text.index("<table"))
        self.assertLess(text.index("</section>"), text.index("Training curves"))
        # Text from report.json is text: no tag of it reaches the page.
        self.assertNotIn("script", page.tags)
        self.assertNotIn("<script>", text)
        self.assertNotIn("<img src=http", text)
        self.assertIn("&lt;script&gt;", text)

    def test_every_set_is_named_for_what_it_is(self):
        report = copy.deepcopy(REPORT)
        report["adversary_games"] = dict(report["games"], opponent="adversary", clean_games=150,
                                         clean_games_share=0.75)
        row = {"positions": 1943866, "exact_sets": 1943834, "exact_set_accuracy": 1943834 / 1943866,
               "exact_set_95ci": [0.999977, 0.999989], "mean_illegal_mass": 2e-6, "illegal_mass_95ci": [0, 4e-6],
               "sampled_picks": 0, "sampled_illegal_picks": 0, "sampled_illegal_rate": 0,
               "sampled_illegal_95ci": [0, 1]}
        names = {"placements.fen": "random placements", "perft-tree.fen": "perft trees from the start",
                 "exhaustive.fen": "every legal position of a material class",
                 "sampled-material.fen": "positions sampled from material classes", HOSTILE + ".fen": None}
        report["position_sets"] = [{"path": "data/positions/" + n, "situations": {"with a legal move": row}}
                                   for n in names]
        search = {"starts": 80, "budget": 2000, "broken": 80, "broken_share": 1.0, "broken_95ci": [0.95, 1.0],
                  "median_evaluations_to_break": 181.5}
        report["position_search"] = [{"path": "data/positions/placements.fen", "search": search,
                                      "random_edits": dict(search, budget=800, broken=0)}]
        done = self.render(report)
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        page = Page()
        page.feed(self.page())
        self.assertIn("Against the adversary", page.texts["verdict-adversary-games"])
        self.assertEqual(page.figures["adversary-clean"], "75.0%")
        expected = ["held-out game positions"] + [(n or "data/positions/" + f) + "1,943,866" for f, n in names.items()]
        self.assertEqual(len(page.rows), 1 + len(expected))
        for row, start in zip(page.rows[1:], expected):
            self.assertTrue(row.startswith(start), (row, start))
        # 32 wrong sets of 1,943,866 never read 100%: the digits that keep it apart from 100%.
        three = page.rows[3]
        self.assertIn("1,943,866" "32" "99.998%" "99.998% – 99.999%", three)
        self.assertEqual(page.figures["exact-set-2"], "99.998%")
        search = page.texts["verdict-search"]
        self.assertIn("random placements80 of 80 within 2,000 evaluations (median 181.5)"
                      "0 of 80 within 800 evaluations", search)
        self.assertNotIn("<script>", self.page())

    def test_the_whole_set_is_said_so(self):
        report = copy.deepcopy(REPORT)
        report["dataset"]["positions"] = 357899
        self.assertEqual(self.render(report).returncode, 0)
        text = self.page()
        self.assertIn("all 357899 rows of data/", text)
        self.assertNotIn("of 357899 rows", text)
        report["options"]["data"] = ["a.h5", "b.h5"]
        self.assertEqual(self.render(report).returncode, 0)
        self.assertIn("all 357899 rows of 2 --data files", self.page())

    def test_data_paths_that_are_not_a_list_of_paths_are_refused_in_one_line(self):
        for value in ("a.h5", [1], {"a": 1}):
            report = copy.deepcopy(REPORT)
            report["options"]["data"] = value
            done = self.render(report)
            self.assertEqual(done.returncode, 1, value)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertIn("options.data", done.stderr)

    def test_a_figure_that_is_not_a_number_is_refused_in_one_line(self):
        for key, value in (("clean_games_share", "<b>76%</b>"), ("games", "1200<script>"),
                           ("illegal_rate_in_check_95ci", [0.01]), ("picks_in_check", True),
                           ("clean_games", 1.5), ("worst_game", [17, 41]),
                           ("illegal_rate_95ci_over_games", [0.002, "x"])):
            report = copy.deepcopy(REPORT)
            report["games"][key] = value
            done = self.render(report)
            self.assertEqual(done.returncode, 1, key)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertIn(f"games.{key}", done.stderr)
            self.assertFalse(os.path.exists(os.path.join(self.folder, "report.html")), key)
        report = copy.deepcopy(REPORT)
        del report["games"]["illegal_rate_in_check"]
        done = self.render(report)
        self.assertEqual(done.returncode, 1)
        self.assertIn("report.json has no 'illegal_rate_in_check'", done.stderr)

    def test_a_picture_outside_the_folder_is_left_out_with_a_warning(self):
        # A secret beside the report's folder, and a link out of it: neither reaches the page.
        outside = os.path.join(os.path.dirname(self.folder), os.path.basename(self.folder) + "-secret.svg")
        with open(outside, "w") as f:
            f.write("<svg/>")
        self.addCleanup(os.remove, outside)
        os.mkdir(os.path.join(self.folder, "gallery"))
        os.symlink(outside, os.path.join(self.folder, "gallery", "link.svg"))
        for name in ("../../" + os.path.basename(outside), outside, "../" * 40 + "etc/passwd", "link.svg",
                     "a/../../x.svg", "..\\..\\x.svg"):
            report = copy.deepcopy(REPORT)
            report["gallery"][0]["picture"] = name
            done = self.render(report)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertIn("is outside the report's folder; left out", done.stderr)
            text = self.page()
            self.assertNotIn("secret", text)
            self.assertNotIn("passwd", text)
            self.assertNotIn("<img", text)
        # A picture inside the folder is still shown.
        with open(os.path.join(self.folder, "gallery", "ok.svg"), "w") as f:
            f.write("<svg/>")
        report = copy.deepcopy(REPORT)
        report["gallery"][0]["picture"] = "ok.svg"
        done = self.render(report)
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        self.assertIn('<img src="gallery/ok.svg"', self.page())

    def test_a_report_that_is_not_json_names_the_file(self):
        with open(os.path.join(self.folder, "report.json"), "w") as f:
            f.write("{not json")
        done = subprocess.run([sys.executable, SCRIPT, self.folder], capture_output=True, text=True)
        self.assertEqual(done.returncode, 1)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertIn(os.path.join(self.folder, "report.json") + ": not JSON", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.folder, "report.html")))


if __name__ == "__main__":
    unittest.main()
