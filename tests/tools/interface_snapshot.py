"""The four tools' outward shape, as text: every --help (each subcommand's too), and from a
tiny run of the whole chain the keys of every report.json and of options.json, with the values
of options.json's options. A refactor of how tools declare their options (issue 34) must leave
it as it is, byte for byte: tests/testdata/interface.txt holds the snapshot taken before.

Usage: interface_snapshot.py BIN_DIR [--update GOLDEN | --check GOLDEN]

Left out, because they change from build to build or run to run and not with the interface:
the version line, paths under the scratch folder and the tools' folder (shown as $TMP and $BIN), and the values of figures a
run measures (times, rates, losses): only their keys and JSON types are kept."""
import json
import os
import subprocess
import sys
import tempfile

# options.json keys whose values are facts of the run or of the build, not options.
MEASURED = {"version", "command_line", "forward_flops_per_position", "train_positions", "val_positions",
            "data_files", "val_files", "total_steps", "machine", "steps_done", "samples_seen", "train_seconds",
            "final_val_loss"}


def run(cmd, tmp):
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    p = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"interface_snapshot: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p.stdout.replace(tmp, "$TMP").replace(os.path.dirname(cmd[0]) + "/", "$BIN/")


def shape(value, prefix, lines):
    """Key paths in order with their JSON types (arrays: their first element's shape)."""
    if isinstance(value, dict):
        lines.append(f"{prefix}: object")
        for k, v in value.items():
            shape(v, f"{prefix}/{k}", lines)
    elif isinstance(value, list):
        lines.append(f"{prefix}: array")
        if value:
            shape(value[0], f"{prefix}[0]", lines)
    else:
        kind = {bool: "bool", int: "number", float: "number", str: "string", type(None): "null"}[type(value)]
        lines.append(f"{prefix}: {kind}")


def main():
    bin_dir = os.path.abspath(sys.argv[1])
    mode, golden = (sys.argv[2], sys.argv[3]) if len(sys.argv) == 4 else (None, None)
    out = []
    tool = lambda name: os.path.join(bin_dir, name)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in (["gen_moves"], ["gen_moves", "perft"], ["gen_moves", "positions"], ["tensorize"],
                    ["tensorize", "merge"], ["train"], ["evaluate"]):
            out.append(f"## {' '.join(cmd)} --help")
            out.append(run([tool(cmd[0])] + cmd[1:] + ["--help"], tmp))
        run([tool("gen_moves"), "--games", "40", "--seed", "3", "--max-plies", "60", "--out", "g.pgn",
             "--report", "gen_moves.json", "-q"], tmp)
        run([tool("gen_moves"), "positions", "--start", "placement", "--count", "20", "--seed", "4",
             "--out", "p.fen"], tmp)
        run([tool("tensorize"), "--in", "g.pgn", "--out", "d.h5", "--split", "0.8,0.2", "--report",
             "tensorize.json", "-q"], tmp)
        run([tool("tensorize"), "merge", "--out", "m.h5", "d.train.h5", "d.val.h5"], tmp)
        run([tool("train"), "--data", "d.train.h5", "--val", "d.val.h5", "--out", "run", "--arch", "resnet",
             "--blocks", "1", "--channels", "8", "--max-steps", "6", "--batch-size", "16", "--eval-every", "3",
             "--seed", "5", "--precision", "fp32", "--report", "train.json", "-q"], tmp)
        run([tool("evaluate"), "--model", "run/model.safetensors", "--data", "d.val.h5", "--positions", "p.fen",
             "--games", "2", "--max-plies", "20", "--seed", "6", "--precision", "fp32", "--report",
             "evaluate.json", "-q"], tmp)
        for name in ("gen_moves", "tensorize", "train", "evaluate"):
            with open(os.path.join(tmp, name + ".json")) as f:
                lines = []
                shape(json.load(f), "", lines)
            out.append(f"## {name} --report: keys")
            out.extend(lines)
        with open(os.path.join(tmp, "run", "options.json")) as f:
            options = json.load(f)
        out.append("## train options.json")
        for k, v in options.items():
            if k in MEASURED:
                lines = []
                shape(v, k, lines)
                out.extend(lines)
            else:
                out.append(f"{k} = {json.dumps(v)}".replace(tmp, "$TMP"))
        with open(os.path.join(tmp, "run", "metrics.csv")) as f:
            out.append("## train metrics.csv header")
            out.append(f.readline().rstrip("\n"))
    text = "\n".join(out) + "\n"
    if mode == "--update":
        with open(golden, "w") as f:
            f.write(text)
    elif mode == "--check":
        with open(golden) as f:
            want = f.read()
        if text != want:
            import difflib
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), text.splitlines(True), golden, "now"))
            sys.exit("interface_snapshot: the tools' interface changed (above); if meant, rerun with --update")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
