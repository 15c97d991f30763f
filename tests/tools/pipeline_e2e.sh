#!/usr/bin/env bash
# pipeline_e2e.sh SOURCE_DIR BUILD_DIR PYTHON: runs `make -f Makefile.pipeline all` on a tiny
# configuration into a temporary folder and checks that every product exists, is valid and
# agrees with the others; then that a second run redoes nothing and a changed variable redoes
# only what depends on it.
set -euo pipefail
src=$1 build=$2 python=$3
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
tiny=(BUILD="$build" DATA="$data" TRAIN_GAMES=24 TEST_GAMES=6 SHARDS=2 STEPS=30 BATCH=32 BLOCKS=1 CHANNELS=8
      EVAL_GAMES=4 EVAL_POSITIONS=300 THREADS=2 DEVICE=cpu PLACEMENT_GAMES=8 LOPSIDED_GAMES=5 OOD_PLACEMENTS=50 OOD_DEPTH=1
      ADVERSARY_GAMES=2 EXHAUSTIVE_MATERIAL=none SAMPLED_MATERIAL=Rn SAMPLED_POSITIONS=40
      SEARCH_STARTS=3 SEARCH_BUDGET=40 RANDOM_EDIT_BUDGET=20)
cd "$src"
make -s -f Makefile.pipeline all "${tiny[@]}" > "$data/all.log" 2>&1 || { cat "$data/all.log"; exit 1; }
grep -q "plies before the first illegal move" "$data/all.log"
# Where the minutes went, stage by stage, in the order they ran.
grep -Eq '^pipeline: minutes by stage: install [0-9.]+, build [0-9.]+, games [0-9.]+, tensors [0-9.]+, train [0-9.]+, positions [0-9.]+, evaluate [0-9.]+, report [0-9.]+$' "$data/all.log" ||
  { grep 'minutes by stage' "$data/all.log"; echo "no minutes by stage"; exit 1; }

"$python" - "$data" <<'PY'
import json, os, subprocess, sys
import h5py
data = sys.argv[1]
def plies(path):
    text = subprocess.run(["zstd", "-dcq", path], check=True, capture_output=True, text=True).stdout
    counts = [int(l.split('"')[1]) for l in text.splitlines() if l.startswith("[PlyCount ")]
    return len(counts), sum(counts)
games = [plies(f"{data}/games/train-{k}.pgn.zst") for k in (0, 1)]
assert sum(g for g, _ in games) == 24, games
games.append(plies(f"{data}/games/placement.pgn.zst"))  # games from random placements, cut at 20 plies
assert games[-1][0] == 8 and games[-1][1] <= 8 * 20, games
games.append(plies(f"{data}/games/lopsided.pgn.zst"))  # from lopsided placements, cut at 20 plies
assert games[-1][0] == 5 and games[-1][1] <= 5 * 20, games
with h5py.File(f"{data}/tensors/train.h5") as f:
    assert f.attrs["num_games"] == 24 + 8 + 5
    # A row before every move, and each game's final position (TRAIN_FINAL_POSITIONS=1).
    assert f.attrs["num_positions"] == sum(p for _, p in games) + 24 + 8 + 5, "positions != plies + final positions"
    assert f["games/plies"][:].sum() == sum(p for _, p in games)
    assert f["games/num_rows"][:].sum() == f.attrs["num_positions"]
    assert (f["played_move"][:] == -1).sum() == 24 + 8 + 5
test_games, test_plies = plies(f"{data}/games/test.pgn.zst")
with h5py.File(f"{data}/tensors/test.h5") as f:
    assert f.attrs["num_positions"] == test_plies and f.attrs["num_games"] == test_games == 6
report = json.load(open(f"{data}/report/report.json"))
assert report["dataset"]["positions"] == min(300, test_plies)
assert report["dataset"]["rows_in_data"] == test_plies
assert report["games"]["games"] == 4
# The report card by situation: on the held-out rows and on each position set (50 placements,
# the perft suite one ply deep); a position is drawn from once unless it has no legal move.
sets = report["position_sets"]
assert [os.path.basename(s["path"]) for s in sets] == ["placements.fen", "perft-tree.fen", "exhaustive.fen",
                                                       "sampled-material.fen"], sets
# Every legal position of the kings alone (no move leaves them side by side: 3,612), and the sample.
assert sets[2]["situations"]["with a legal move"]["positions"] == 3612, sets[2]["situations"]["with a legal move"]
assert sets[3]["situations"]["with a legal move"]["positions"] + sets[3]["situations"]["no legal move"]["positions"] == 40
assert report["adversary_games"]["games"] == 2 and report["adversary_games"]["opponent"] == "adversary"
# The model card beside the model: its recipe, data and machine, and what evaluate measured.
card = open(f"{data}/runs/resnet-default/MODEL_CARD.md").read()
for part in ("## Recipe", "## Data", "## Training", "## Evaluation", "## Known limits", "games vs the adversary",
             "exact legal sets, exhaustive.fen", "--model-card"):
    assert part in card, (part, card)
assert report["adversary_games"]["mean_illegal_mass_after_adversary"] >= 0
searches = report["position_search"]
assert [os.path.basename(s["path"]) for s in searches] == ["placements.fen", "perft-tree.fen"], searches
for s in searches:
    assert s["search"]["starts"] == 3 and s["search"]["budget"] == 40 and s["random_edits"]["budget"] == 20, s
    assert 0 <= s["search"]["broken"] <= 3 and len(s["search"]["breaks"]) == s["search"]["broken"], s
with open(f"{data}/positions/placements.fen") as f:
    listed = len(f.read().splitlines())
card = sets[0]["situations"]
assert card["with a legal move"]["positions"] + card["no legal move"]["positions"] == listed == 50, card
for card in [s["situations"] for s in sets] + [report["dataset"]["situations"]]:
    whole = card["with a legal move"]
    for name, row in card.items():
        assert 0 <= row["exact_set_95ci"][0] <= row["exact_set_accuracy"] <= row["exact_set_95ci"][1] <= 1, (name, row)
        if name != "no legal move":
            assert row["sampled_picks"] <= row["positions"] and row["sampled_picks"] <= whole["positions"], (name, row)
assert report["dataset"]["situations"]["with a legal move"]["positions"] == report["dataset"]["positions"]
assert card["with a legal move"]["sampled_picks"] == card["with a legal move"]["positions"]
assert report["model"]["config"]["blocks"] == 1
assert report["model"]["training"]["steps_done"] == 30
# The headline model sees the position only: the pipeline's default inputs hold nothing the
# move generator derived, and the report says so.
assert report["model"]["input_kind"] == "state" and report["model"]["input_kind_from_move_generator"] is False, report["model"]
assert report["model"]["training"]["compute_precision"] in ("fp32", "bf16")
lo, hi = report["games"]["mean_plies_95ci"]
assert lo <= report["games"]["mean_plies_before_first_illegal"] <= hi
assert 0 <= report["games"]["mean_plies_before_first_illegal"]
# The headline's proportions: each inside its interval, the picks in and out of check adding up.
g = report["games"]
for share, ci in (("clean_games_share", "clean_games_95ci"), ("illegal_rate_per_pick", "illegal_rate_95ci"),
                  ("illegal_rate_in_check", "illegal_rate_in_check_95ci"),
                  ("illegal_rate_not_in_check", "illegal_rate_not_in_check_95ci")):
    assert 0 <= g[ci][0] <= g[share] <= g[ci][1] <= 1, (share, g[share], g[ci])
assert g["clean_games_share"] == g["clean_games"] / g["games"]
assert g["picks_in_check"] + g["picks_not_in_check"] == g["model_picks"]
assert g["illegal_picks_in_check"] + g["illegal_picks_not_in_check"] == g["illegal_picks"]
summary = open(f"{data}/report/summary.txt").read()
assert summary.index("Headline") < summary.index("In 4 games"), summary
assert f"the first {min(300, test_plies)} of {test_plies} rows of {data}/tensors/test.h5" in summary or test_plies <= 300, summary
rows = open(f"{data}/report/metrics.csv").read().splitlines()
assert rows[0].startswith("step,") and rows[-1].startswith("30,"), rows
for png in ("loss.png", "position.png"):
    assert open(f"{data}/report/{png}", "rb").read(8) == b"\x89PNG\r\n\x1a\n", png

# report.html: self-contained (no scripts, nothing outside its folder) and the same numbers.
from html.parser import HTMLParser
class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.tags, self.figures, self.current = [], set(), {}, None
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        for key in ("src", "href"):
            if key in attrs:
                self.refs.append(attrs[key])
        self.current = attrs.get("id")
    def handle_data(self, text):
        if self.current:
            self.figures[self.current] = text
            self.current = None
page = Page()
page.feed(open(f"{data}/report/report.html").read())
assert "script" not in page.tags
for ref in page.refs:
    assert "://" not in ref and not ref.startswith("/") and ".." not in ref, ref
    assert os.path.isfile(f"{data}/report/{ref}"), f"report.html refers to a missing {ref}"
g, d = report["games"], report["dataset"]
assert page.figures["plies"] == f'{g["mean_plies_before_first_illegal"]:.1f}', page.figures
assert page.figures["clean"] == f'{100 * g["clean_games_share"]:.1f}%', page.figures
assert page.figures["illegal-in-check"] == f'{100 * g["illegal_rate_in_check"]:.3f}%', page.figures
assert page.figures["exact"] == f'{100 * d["exact_set_accuracy"]:.2f}%', page.figures
assert page.figures["precision"] == f'{d["precision"]:.5f}' and page.figures["recall"] == f'{d["recall"]:.5f}'
assert "loss.png" in page.refs and "position.png" in page.refs
for group in report["gallery"]:
    assert f'gallery/{group["picture"]}' in page.refs, group["name"]
    assert all(m["fen"] and m["move"] for m in group["mistakes"])
print("products consistent")
PY

# A second run redoes nothing; a changed evaluation variable redoes only the report.
stamp() { stat -c %Y "$data/games/train-0.pgn.zst" "$data/tensors/train.h5" "$data/runs/resnet-default/model.safetensors" "$data/report/report.json"; }
before=$(stamp)
sleep 1
make -s -f Makefile.pipeline all "${tiny[@]}" > "$data/again.log" 2>&1
[[ $(stamp) == "$before" ]] || { echo "second make all remade products"; exit 1; }
grep -Eq '^pipeline: minutes by stage: install [0-9.]+, build [0-9.]+$' "$data/again.log" ||
  { echo "a make that redid nothing shows stages it did not run"; exit 1; }
make -s -f Makefile.pipeline all "${tiny[@]}" EVAL_GAMES=2 > /dev/null 2>&1
after=$(stamp)
[[ $(echo "$after" | head -3) == $(echo "$before" | head -3) ]] || { echo "EVAL_GAMES redid more than the report"; exit 1; }
[[ $(echo "$after" | tail -1) != $(echo "$before" | tail -1) ]] || { echo "EVAL_GAMES did not redo the report"; exit 1; }
# Rendered headless by a browser (Debian's chromium, which scripts/install-deps installs): a
# missing browser fails the test instead of skipping the check unseen.
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -n $browser ]]; then
  "$browser" --headless --no-sandbox --disable-gpu --window-size=1300,2400 \
    --screenshot="$data/report.png" "file://$data/report/report.html" > /dev/null 2>&1
  [[ $(head -c 4 "$data/report.png" | od -An -c | tr -d ' ') == "211PNG" ]] || { echo "chromium did not render"; exit 1; }
else
  echo "no browser to render report.html (scripts/install-deps installs chromium)"
  exit 1
fi
echo "pipeline ok"
