"""A report folder as `make all` leaves it, for scripts/report-html's tests: report.json with every
part evaluate writes (the held-out rows, the four position sets, games against the random mover
and the adversary, the position search, --fen, the gallery), shaped as tests/testdata/interface.txt
lists evaluate's keys and with the default net's figures of docs/benchmarks.md (2026-12-01, Zen 5);
metrics.csv with validation rows whose errors reach zero; loss.png through scripts/plot-metrics
(when gnuplot is there); the gallery's and the position's pictures as small SVGs."""
import json
import os
import shutil
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SITUATIONS = ("with a legal move", "in check", "double check", "pinned piece", "en passant available",
              "castling available", "castling refused (attacked square)", "promotion", "three or more queens",
              "one to five legal moves", "no legal move")


def wilson(k, n):
    """The 95% Wilson interval of k of n, as util/stats gives it."""
    if n == 0:
        return [0.0, 1.0]
    z, p = 1.959963984540054, k / n
    centre, half = (p + z * z / (2 * n)), z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    return [max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))]


def card(positions, wrong, mass, picks=None, illegal=0, terminal=0):
    """A situation card whose "with a legal move" row is over `positions` with `wrong` sets wrong."""
    picks = positions if picks is None else picks
    rows = {}
    for i, name in enumerate(SITUATIONS):
        n = positions if i == 0 else terminal if name == "no legal move" else positions // (3 + 2 * i)
        w = wrong if i == 0 else min(n, wrong // (i + 1))
        p = 0 if name == "no legal move" else (picks if i == 0 else n)
        s = illegal if i == 0 else 0
        rows[name] = {"positions": n, "exact_sets": n - w, "exact_set_accuracy": (n - w) / n if n else 0.0,
                      "exact_set_95ci": wilson(n - w, n), "mean_illegal_mass": mass,
                      "illegal_mass_95ci": [max(0.0, mass * 0.6), mass * 1.4], "sampled_picks": p,
                      "sampled_illegal_picks": s, "sampled_illegal_rate": s / p if p else 0.0,
                      "sampled_illegal_95ci": wilson(s, p)}
    return rows


def games(opponent, n, clean, picks, illegal, in_check, illegal_in_check, plies):
    g = {"games": n, "opponent": opponent, "sampling": "multinomial over sigmoid outputs",
         "clean_games": clean, "clean_games_share": clean / n, "clean_games_95ci": wilson(clean, n),
         "mean_plies_before_first_illegal": plies, "mean_plies_95ci": [plies - 4.1, plies + 4.1],
         "model_picks": picks, "illegal_picks": illegal, "illegal_rate_per_pick": illegal / picks,
         "illegal_rate_95ci": wilson(illegal, picks),
         "illegal_rate_95ci_over_games": [0.0, 2 * wilson(illegal, picks)[1]],
         "worst_game": {"game": 3, "illegal_picks": (illegal + 1) // 2, "model_picks": picks // n + illegal}
         if illegal else None,
         "picks_in_check": in_check, "illegal_picks_in_check": illegal_in_check,
         "illegal_rate_in_check": illegal_in_check / in_check,
         "illegal_rate_in_check_95ci": wilson(illegal_in_check, in_check),
         "picks_not_in_check": picks - in_check, "illegal_picks_not_in_check": illegal - illegal_in_check,
         "illegal_rate_not_in_check": (illegal - illegal_in_check) / (picks - in_check),
         "illegal_rate_not_in_check_95ci": wilson(illegal - illegal_in_check, picks - in_check),
         "illegal_picks_leaving_king_in_check": illegal_in_check,
         "illegal_picks_by_reason": {"not a move of that piece": illegal - illegal_in_check, "blocked": 0,
                                     "leaves or puts own king in check": illegal_in_check,
                                     "castling / en passant rules": 0},
         "resample_after_illegal": True}
    if opponent == "random":
        g["vs_random"] = {"wins": 3, "draws": n - 5, "losses": 2}
    else:
        g["mean_illegal_mass_after_adversary"] = 0.0103
    g["seconds"] = 12.5
    return g


def search(broken, median, budget, starts=80):
    situations = {name: broken // (i + 2) for i, name in enumerate(SITUATIONS)}
    fen = "1Q2k3/8/3Q4/8/2Q5/8/8/4K3 w - - 0 1"
    return {"starts": starts, "budget": budget, "broken": broken, "broken_share": broken / starts,
            "broken_95ci": wilson(broken, starts), "broken_at_start": 0, "median_evaluations_to_break": median,
            "breaks_by_situation": situations,
            "breaks": [{"start": fen, "found": fen, "evaluations": 100 + i, "margin": -0.2} for i in range(3)],
            "seconds": 4.5}


def report():
    model = {"kind": "resnet", "hidden": 0, "blocks": 6, "channels": 32, "heads": 0, "squeeze_excitation": False,
             "geometric_head": True, "mixing": "none", "policy_head": "pairs", "input_kind": "state"}
    training = {"tool": "train", "version": "0.9.0 (g00a75e6)", "batch_size": 128, "check_weight": 4.0,
                "command_line": "build/bin/train --config recipes/default.toml --data data/tensors/train.h5 "
                                "--out data/runs/resnet-default --force --threads 2",
                "data": ["data/tensors/train.h5"], "lr": 0.0035, "max_steps": 50000, "seed": 1, "model": model,
                "steps_done": 48205, "samples_seen": 6170240, "train_seconds": 1108.7, "final_val_loss": 2.1e-5}
    mistakes = [{"fen": "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "move": "e1g1", "probability": 0.62,
                 "reason": "castling / en passant rules", "illegal_mass": 0.62, "missed_legal_moves": [],
                 "where": "games vs adversary, game 17 ply 40"}]
    return {
        "tool": "evaluate", "version": "0.9.0 (g00a75e6)",
        "command_line": "build/bin/evaluate --config recipes/default.toml --model data/runs/resnet-default/"
                        "model.safetensors --data data/tensors/test.h5 --positions data/positions/placements.fen "
                        "--positions data/positions/perft-tree.fen --positions data/positions/exhaustive.fen "
                        "--positions data/positions/sampled-material.fen --report data/report/report.json",
        "model": {"path": "data/runs/resnet-default/model.safetensors",
                  "description": "resnet 6x32, pairs policy head", "config": model, "input_kind": "state",
                  "input_kind_from_move_generator": False,
                  "input_kind_description": "the board, side to move, castling rights and en passant square",
                  "parameters": 126977, "training": training},
        "options": {"data": ["data/tensors/test.h5"],
                    "positions": ["data/positions/placements.fen", "data/positions/perft-tree.fen",
                                  "data/positions/exhaustive.fen", "data/positions/sampled-material.fen"],
                    "search": ["data/positions/placements.fen", "data/positions/perft-tree.fen"],
                    "search_starts": 80, "search_budget": 2000, "random_edit_budget": 800, "max_positions": 0,
                    "threshold": 0.5, "games": 400, "opponent": "random", "adversary_games": 200, "greedy": False,
                    "seed": 1, "max_plies": 400, "device": "cpu", "compute_precision": "fp32", "kernels": "board"},
        "dataset": {
            "positions": 357899, "rows_in_data": 357899, "bce": 1.9e-5, "precision": 0.99998, "recall": 0.99997,
            "f1": 0.999975, "exact_set_accuracy": 0.99990, "exact_set_95ci": wilson(357863, 357899),
            "top1_legal": 1.0, "legal_probability_mass": 0.9999, "inference_positions_per_second": 14000.0,
            "by_move_kind": {k: {"recall": 0.9999, "precision": 0.9998, "legal_moves": 100000, "predicted": 100001}
                             for k in ("pawn", "knight", "bishop", "rook", "queen", "king", "capture", "castling",
                                       "en passant", "promotion", "check evasion", "pinned piece")},
            "false_positives": {r: {"count": 3, "share": 0.25} for r in (
                "not a move of that piece", "blocked", "leaves or puts own king in check",
                "castling / en passant rules")},
            "illegal_mass_by_position": {k: {"positions": 1000, "mean_illegal_mass": 1e-5,
                                             "share_of_all_illegal_mass": 0.2} for k in (
                "in check", "not in check", "opening (>24 pieces)", "middlegame (13-24 pieces)",
                "endgame (<=12 pieces)")},
            "rare_moves_whole_set": {"positions_scanned": 357899, "positions_with_castling_or_en_passant": 41000,
                                     "castling": {"recall": 0.9996, "precision": 0.9999, "legal_moves": 52000,
                                                  "predicted": 51990},
                                     "en_passant": {"recall": 0.9991, "precision": 0.9998, "legal_moves": 3100,
                                                    "predicted": 3098}},
            "situations": card(357899, 36, 4e-6),
        },
        "position_sets": [
            {"path": "data/positions/placements.fen", "situations": card(19534, 14, 1.4e-4, illegal=2, terminal=466)},
            {"path": "data/positions/perft-tree.fen", "situations": card(10912, 1, 1e-6)},
            {"path": "data/positions/exhaustive.fen", "situations": card(1943866, 32, 2e-6, terminal=1718)},
            {"path": "data/positions/sampled-material.fen", "situations": card(19950, 3, 5e-6, terminal=50)},
        ],
        "games": games("random", 400, 400, 69984, 0, 6011, 0, 96.3),
        "adversary_games": games("adversary", 200, 197, 13923, 4, 2510, 2, 69.6),
        "position_search": [
            {"path": "data/positions/placements.fen", "search": search(80, 181.5, 2000),
             "random_edits": search(48, 310.5, 800)},
            {"path": "data/positions/perft-tree.fen", "search": search(80, 213.5, 2000),
             "random_edits": search(49, 239, 800)},
        ],
        "position": {"fen": "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
                     "top_moves": [{"move": "g8f6", "index": 1000, "probability": 0.99, "legal": True},
                                   {"move": "a7a5", "index": 1001, "probability": 0.98, "legal": True}]},
        "gallery": [{"name": name, "title": title, "picture": name + ".svg", "mistakes": mistakes * 3}
                    for name, title in (("king_safety", "Leaves or puts its own king in check"),
                                        ("castling", "Castling and en passant rules"),
                                        ("blocked", "Through a piece in the way"))],
    }


METRICS = """step,epoch,samples,train_loss,val_loss,precision,recall,f1,samples_per_s,lr,elapsed_s
1000,0.02,128000,0.0300,0.02000,0.90000,0.85000,0.87430,5000.0,0.0035,25.6
5000,0.10,640000,0.0010,0.00080,0.99200,0.99000,0.99100,5100.0,0.0035,128.0
10000,0.21,1280000,0.00030,0.00020,0.99900,0.99850,0.99875,5200.0,0.0034,256.0
20000,0.41,2560000,0.00008,0.00006,0.99990,0.99980,0.99985,5200.0,0.0030,512.0
30000,0.62,3840000,0.00004,0.00003,1.00000,0.99995,0.99997,5200.0,0.0020,768.0
40000,0.83,5120000,0.00003,0.00002,0.99999,1.00000,0.99999,5200.0,0.0010,1024.0
48205,1.00,6170240,0.00002,0.00002,1.00000,1.00000,1.00000,5200.0,0.0001,1108.7
"""

BOARD_SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
             '<rect width="{w}" height="{h}" fill="#eeeed2"/><text x="10" y="30" font-size="20">{t}</text></svg>')


def write_folder(folder, metrics=METRICS):
    """The report folder: report.json, metrics.csv, loss.png (without gnuplot: none), the pictures."""
    with open(os.path.join(folder, "report.json"), "w") as f:
        json.dump(report(), f, indent=2)
    run = os.path.join(folder, "run")
    os.makedirs(run, exist_ok=True)
    with open(os.path.join(run, "metrics.csv"), "w") as f:
        f.write(metrics)
    shutil.copy(os.path.join(run, "metrics.csv"), os.path.join(folder, "metrics.csv"))
    if shutil.which("gnuplot"):
        subprocess.run([os.path.join(ROOT, "scripts", "plot-metrics"), run, os.path.join(folder, "loss.png")],
                       check=True)
    os.makedirs(os.path.join(folder, "gallery"), exist_ok=True)
    for group in report()["gallery"]:
        with open(os.path.join(folder, "gallery", group["picture"]), "w") as f:
            f.write(BOARD_SVG.format(w=1200, h=300, t=group["title"]))
    with open(os.path.join(folder, "position.svg"), "w") as f:
        f.write(BOARD_SVG.format(w=400, h=400, t="position"))
