"""Runs the code blocks of a markdown file that are marked to run, as written (issue 62: the docs
cannot drift from the code). Usage:

    run_doc_blocks.py FILE.md [FILE.md ...] [--bin build/bin] [--list] [--keep]
    run_doc_blocks.py --check [FILE.md ...] [--tested FILE.md ...]
                        the marks only, of README.md and every docs/*.md by default

The convention, in the markdown source (an HTML comment, which renderers do not show), on the
line just before a fenced block:

    <!-- run -->                 the block is run
    <!-- not run: REASON -->     the block is not meant to run (a placeholder, an install, a long job)

Every ```python, ```sh, ```bash or ```shell block of a file given here must carry one of the two
(a new block without either fails the test, so that a runnable example is never left out by
mistake); blocks in other languages, or with none, are text, except that a block with no language
whose first line reads as a command (`build/bin/...`, `scripts/...`, `make ...`, `pip ...`, see
COMMAND) fails too: give it ```sh and a mark, or a language such as ```text. --check runs nothing
and checks only the marks, by default of README.md and every docs/*.md as they are when it runs
(so a new doc is checked without a change here); with --tested (the files tests/CMakeLists.txt
runs), a file with a block marked to run that no test runs fails too. Marked blocks run in the order of
the file, each in a process of its own (python: this Python, with the checkout's python/ on
PYTHONPATH; sh: bash -e -o pipefail), in one scratch folder shaped as a checkout after `make
all`, so that blocks may use what an earlier block of the file wrote:

    build/bin/          the tools (--bin; also on PATH)
    python/ scripts/ recipes/   links to the checkout's folders
    data/tensors/train.h5, data/tensors/test.h5       small datasets (gen_moves + tensorize)
    data/runs/resnet-default/model.safetensors        a small resnet, state inputs, trained a few steps by train
    runs/r6x32/model.safetensors                      the same model
    legalnet            on PATH: the package's command (python -m legalnet)

A block reads no input (stdin is /dev/null; a block for the UCI engine pipes its commands in), runs
in a process group of its own, killed with whatever the block left running when it ends, and its
script keeps the line numbers of the file,
so that a traceback or bash's error names the markdown line. A block fails on a non-zero exit
status or after --timeout seconds (the blocks are meant to take seconds: a doc shows small step
counts where a block runs). The scratch folder is removed unless --keep or
LEGALNET_KEEP_TEST_FILES=1."""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RUNNABLE = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "shell": "sh"}
RUN = re.compile(r"<!--\s*run\s*-->")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(\S.*?)\s*-->")
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)(.*)$")
# The first line of a block without a language that reads as a shell command.
COMMAND = re.compile(r"^\$?\s*(build/bin/|scripts/|slurm/|bench/|tests/|\./|(make|cmake|ctest|pip|pip3|python|python3|"
                     r"legalnet|sbatch|srun|apt-get|git|cd|export)\s)")


class Block:
    def __init__(self, path, line, language, code, mark, reason=None):
        self.path, self.line, self.language, self.code = path, line, language, code
        self.mark, self.reason = mark, reason  # "run", "not run" or None

    @property
    def kind(self):
        return RUNNABLE.get(self.language)

    def where(self):
        return f"{self.path}:{self.line}"


def parse(path, text=None):
    """The fenced blocks of a markdown file: each with its first code line's number (1-based),
    its language (the info string's first word), its code and the mark on the line before its
    opening fence."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, language = len(m.group(1)), m.group(2), m.group(3).lower()
        before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        mark, reason = None, None
        if RUN.fullmatch(before):
            mark = "run"
        elif NOT_RUN.fullmatch(before):
            mark, reason = "not run", NOT_RUN.fullmatch(before).group(1)
        code, k = [], i + 1
        while k < len(lines):
            close = re.match(r"^ {0,3}" + fence[0] + "{" + str(len(fence)) + r",}\s*$", lines[k])
            if close:
                break
            line = lines[k]
            code.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            k += 1
        blocks.append(Block(path, i + 2, language, "\n".join(code) + "\n", mark, reason))
        i = k + 1
    return blocks


def problems(blocks):
    """What is wrong with the marks: a runnable-language block with no mark, a block with no
    language that reads as a command and has no mark, a block marked to run in a language this
    runner does not run."""
    found = []
    for b in blocks:
        first = next((line for line in b.code.split("\n") if line.strip()), "")
        if not b.language and b.mark is None and COMMAND.match(first.strip()):
            found.append(f"{b.where()}: a block without a language that reads as a command ({first.strip()[:40].rstrip()}): "
                         "make it ```sh with <!-- run --> or <!-- not run: REASON --> before it, or ```text")
        if b.kind and b.mark is None:
            found.append(f"{b.where()}: a ```{b.language} block without <!-- run --> or <!-- not run: REASON --> "
                         "on the line before it")
        if b.mark == "run" and not b.kind:
            found.append(f"{b.where()}: marked to run, but ```{b.language or '(no language)'} is not run "
                         f"(only {', '.join(sorted(RUNNABLE))})")
    return found


def run_tool(args, cwd):
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def make_fixtures(folder, bin_dir):
    """The scratch checkout the blocks run in (the module docstring lists it)."""
    os.makedirs(os.path.join(folder, "build"))
    os.symlink(os.path.abspath(bin_dir), os.path.join(folder, "build", "bin"))
    for name in ("python", "scripts", "recipes"):
        os.symlink(os.path.join(ROOT, name), os.path.join(folder, name))
    tools = os.path.join(folder, "build", "bin")
    tensors = os.path.join(folder, "data", "tensors")
    os.makedirs(tensors)
    for name, seed in (("train", 1), ("test", 1000004)):
        pgn = os.path.join(tensors, name + ".pgn")
        run_tool([os.path.join(tools, "gen_moves"), "--games", "12", "--seed", str(seed), "--out", pgn, "--quiet"],
                 folder)
        run_tool([os.path.join(tools, "tensorize"), "--in", pgn, "--out", os.path.join(tensors, name + ".h5"),
                  "--quiet"], folder)
        os.remove(pgn)
    run = os.path.join(folder, "data", "runs", "resnet-default")
    run_tool([os.path.join(tools, "train"), "--data", os.path.join(tensors, "train.h5"), "--out", run,
              "--arch", "resnet", "--blocks", "1", "--channels", "8", "--inputs", "state", "--max-steps", "2",
              "--batch-size", "32", "--threads", "1", "--quiet"], folder)
    os.makedirs(os.path.join(folder, "runs", "r6x32"))
    shutil.copy(os.path.join(run, "model.safetensors"), os.path.join(folder, "runs", "r6x32", "model.safetensors"))
    commands = os.path.join(folder, ".bin")
    os.makedirs(commands)
    with open(os.path.join(commands, "legalnet"), "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" -m legalnet "$@"\n')
    os.chmod(os.path.join(commands, "legalnet"), 0o755)


def environment(folder, bin_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = os.pathsep.join([os.path.join(folder, ".bin"), os.path.abspath(bin_dir), env.get("PATH", "")])
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_block(block, folder, env, timeout):
    """(ok, seconds, output) of one block, run from a script whose line numbers are the file's."""
    scripts = os.path.join(folder, ".blocks")
    os.makedirs(scripts, exist_ok=True)
    name = f"{os.path.basename(block.path)}-L{block.line}." + ("py" if block.kind == "python" else "sh")
    script = os.path.join(scripts, name)
    with open(script, "w", encoding="utf-8") as f:
        f.write("\n" * (block.line - 1) + block.code)
    command = [sys.executable, script] if block.kind == "python" else ["bash", "-e", "-o", "pipefail", script]
    start = time.monotonic()
    # A process group of its own, so that what the block starts in the background (a second train
    # process) ends with it, and a block stopped for its time leaves nothing running.
    process = subprocess.Popen(command, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        ended = f"\n(exit status {process.returncode})" if process.returncode else ""
    except subprocess.TimeoutExpired:
        output, ended = None, f"\n(stopped after {timeout} s: a block is meant to take seconds, and to leave nothing running)"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if output is None:
        output, _ = process.communicate()
    return not ended, time.monotonic() - start, output.decode(errors="replace") + ended


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", help="markdown files (--check: default README.md and docs/*.md)")
    p.add_argument("--bin", default=os.environ.get("LEGALNET_BIN_DIR", os.path.join(ROOT, "build", "bin")))
    p.add_argument("--list", action="store_true", help="list the blocks and their marks, run nothing")
    p.add_argument("--check", action="store_true", help="check the marks only, run nothing")
    p.add_argument("--tested", action="append", default=[], metavar="FILE.md",
                   help="with --check: a file a test runs (repeat); a file with blocks to run that is not one fails")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    p.add_argument("--timeout", type=float, default=120, help="seconds a block may take")
    a = p.parse_args()
    if not a.files and not a.check:
        p.error("no markdown file given (only --check has a default)")
    files = a.files or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    blocks = [b for path in files for b in parse(path)]
    if a.list:
        for b in blocks:
            if b.kind or b.mark:
                print(f"{b.where()}: {b.language}: {b.mark or 'UNMARKED'}" + (f" ({b.reason})" if b.reason else ""))
        return 0
    wrong = problems(blocks)
    for w in wrong:
        print(w, file=sys.stderr)
    marked = [b for b in blocks if b.mark == "run" and b.kind]
    if a.check and a.tested:
        tested = {os.path.realpath(t) for t in a.tested}
        for path in sorted({b.path for b in marked if os.path.realpath(b.path) not in tested}):
            wrong.append(f"{path}: blocks marked <!-- run -->, but no test runs them: add the file to "
                         "tests/CMakeLists.txt's list of docs")
            print(wrong[-1], file=sys.stderr)
    if a.check:
        counts = {m: sum(1 for b in blocks if b.mark == m) for m in ("run", "not run")}
        print(f"{len(files)} files: {counts['run']} blocks marked to run, {counts['not run']} not run"
              + (f"; {len(wrong)} marks wrong" if wrong else ""))
        return 1 if wrong else 0
    if not marked:
        print("no block marked <!-- run -->", file=sys.stderr)
        return 1
    keep = a.keep or os.environ.get("LEGALNET_KEEP_TEST_FILES") == "1"
    folder = tempfile.mkdtemp(prefix="legalnet-doc-blocks.")
    failed = 0
    try:
        start = time.monotonic()
        make_fixtures(folder, a.bin)
        print(f"fixtures: {time.monotonic() - start:.1f} s", flush=True)
        env = environment(folder, a.bin)
        for b in marked:
            ok, seconds, output = run_block(b, folder, env, a.timeout)
            print(f"{b.where()} ({b.language}): {'ok' if ok else 'FAILED'}, {seconds:.1f} s", flush=True)
            if not ok:
                failed += 1
                print(output.rstrip() + "\n", file=sys.stderr, flush=True)
    finally:
        if keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{len(marked) - failed} of {len(marked)} marked blocks ran"
          + (f"; {len(wrong)} marks wrong" if wrong else ""))
    return 1 if failed or wrong else 0

if __name__ == "__main__":
    sys.exit(main())
