"""Time per move of `evaluate --uci` (docs/uci.md): for each model and each set of engine options,
the engine is started once and asked about POSITIONS positions of seeded random games (python-chess's
random mover), each as `position fen FEN` + `go movetime 1000`, timed from the write to the
`bestmove` line on a raw pipe (no client library in between). Reports the median and 90th
percentile of that wall time, and the engine process's CPU time per move (from /proc, the figure
to compare on a shared machine), and the time from start to `readyok` (libtorch and the model
loading). The configurations run ROUNDS times in a rotating order; the medians are over all rounds.
Usage: uci_move_time.py MODEL... [--bin build/bin] [--positions 1000] [--rounds 3]
       [--config "--precision fp32"] [--config ...]"""
import argparse
import os
import random
import statistics
import subprocess
import time

import chess


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def positions(n, seed=7):
    rng, fens = random.Random(seed), []
    while len(fens) < n:
        board = chess.Board()
        while not board.is_game_over() and len(fens) < n:
            fens.append(board.fen())
            board.push(rng.choice(list(board.legal_moves)))
    return fens


def measure(binary, model, options, fens):
    proc = subprocess.Popen([binary, "--uci", "--model", model, *options], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(line, answer):
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        while not (out := proc.stdout.readline()).startswith(answer):
            if not out:
                raise RuntimeError(f"the engine ended: {proc.wait()}")

    t0 = time.perf_counter()
    ask("uci", "uciok")
    ask("isready", "readyok")
    start = time.perf_counter() - t0
    cpu0 = cpu_seconds(proc.pid)
    times = []
    for fen in fens:
        t = time.perf_counter()
        ask(f"position fen {fen}\ngo movetime 1000", "bestmove")
        times.append(time.perf_counter() - t)
    cpu = (cpu_seconds(proc.pid) - cpu0) / len(fens)
    proc.stdin.close()
    proc.wait()
    return start, times, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+")
    parser.add_argument("--bin", default="build/bin")
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--config", action="append", help="engine options, one string (default: --device cpu)")
    args = parser.parse_args()
    configs = args.config or ["--device cpu"]
    fens = positions(args.positions)
    runs = [(m, c) for m in args.models for c in configs]
    results = {run: ([], [], []) for run in runs}
    for r in range(args.rounds):
        for model, config in runs[r % len(runs):] + runs[:r % len(runs)]:
            start, times, cpu = measure(os.path.join(args.bin, "evaluate"), model, config.split(), fens)
            results[(model, config)][0].append(start)
            results[(model, config)][1].extend(times)
            results[(model, config)][2].append(cpu)
    print(f"{args.positions} positions x {args.rounds} rounds; median (p90) wall ms a move; engine CPU ms a move; "
          "start to readyok s")
    for (model, config), (starts, times, cpus) in results.items():
        times.sort()
        print(f"{model} {config}: {1000 * statistics.median(times):.3f} ({1000 * times[len(times) * 9 // 10]:.3f}); "
              f"{1000 * statistics.median(cpus):.3f}; {statistics.median(starts):.2f}")


if __name__ == "__main__":
    main()
