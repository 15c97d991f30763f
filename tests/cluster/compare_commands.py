#!/usr/bin/env python3
"""compare_commands.py MAKE_LOG_DIR SLURM_LOG_DIR JOBS PREFIX=NAME...: the Slurm path's tool calls against
make's (tests/cluster/slurm_commands.sh records both through tests/cluster/fake/tool).

Each call is normalised: the PREFIX=NAME pairs rewrite paths (each side's data folder to DATA,
the repository to nothing); the options that change how a tool runs but not what it makes
(--threads, --quiet, --checkpoint-every) are dropped; options are compared as a set, except
that repeated ones (--in, --positions, --search) keep their order. The per-task datasets that
`tensorize merge` joins count as the one tensorize of their inputs in merge order, as make runs
it, when each was made with the same options. The two sides must then make the same calls, as
many times each. And on the Slurm side every file a call reads must come from a call in the same
job or in a job it depends on (JOBS: `ID SCRIPT DEPENDENCY...` lines), through afterok.
"""
import collections
import os
import sys

DROPPED = {"--threads": True, "--quiet": False, "--checkpoint-every": True}  # option: takes a value
FLAGS = {"--include-final", "--force", "--resume", "--quiet", "--copy", "--strict", "--dedupe"}
REPEATED = {"--in", "--positions", "--search", "--data"}
SUBCOMMANDS = {"gen_moves": {"positions", "perft"}, "tensorize": {"merge"}}


def rewrite(arg, prefixes):
    for prefix, name in prefixes:
        if arg.startswith(prefix):
            return name + arg[len(prefix):]
    return arg


def parse(fields, prefixes):
    """(job, tool, subcommand, options: list of (option, value), positionals) of one record."""
    job, tool, *args = fields
    args = [rewrite(a, prefixes) for a in args]
    sub = ""
    if args and args[0] in SUBCOMMANDS.get(tool, ()):
        sub = args.pop(0)
    options, positionals, i = [], [], 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            if a in FLAGS or i + 1 == len(args):
                value, i = None, i + 1
            else:
                value, i = args[i + 1], i + 2
            if a not in DROPPED:
                options.append((a, value))
        else:
            positionals.append(a)
            i += 1
    return {"job": job, "tool": tool, "sub": sub, "options": options, "positionals": positionals}


def load(path, prefixes):
    calls = []
    for name in sorted(os.listdir(path)):
        fields = open(os.path.join(path, name), "rb").read().decode().split("\0")
        assert fields[-1] == "", name
        calls.append(parse(fields[:-1], prefixes))
    return calls


def key(call):
    """The call as compared: repeated options in their order, the others sorted."""
    order = sorted(enumerate(call["options"]), key=lambda e: (e[1][0], e[0] if e[1][0] in REPEATED else 0))
    words = [call["tool"], call["sub"]] + [o if v is None else f"{o}={v}" for _, (o, v) in order] + call["positionals"]
    return " ".join(w for w in words if w)


def value(call, option):
    return next((v for o, v in call["options"] if o == option), None)


def join_merged(calls):
    """The datasets a merge joins, and the merge, as the one tensorize make runs."""
    out = []
    by_output = {value(c, "--out"): c for c in calls if c["tool"] == "tensorize" and not c["sub"]}
    used = set()
    for c in calls:
        if c["tool"] == "tensorize" and c["sub"] == "merge" and all(p in by_output for p in c["positionals"]):
            parts = [by_output[p] for p in c["positionals"]]
            rest = [sorted(o for o in p["options"] if o[0] not in ("--in", "--out")) for p in parts]
            if any(r != rest[0] for r in rest):
                sys.exit(f"FAILED: the datasets merged into {value(c, '--out')} were made with different options: {rest}")
            ins = [o for p in parts for o in p["options"] if o[0] == "--in"]
            out.append({"job": c["job"], "tool": "tensorize", "sub": "", "positionals": [],
                        "options": ins + [("--out", value(c, "--out"))] + rest[0]})
            used.update(id(p) for p in parts)
        else:
            out.append(c)
    return [c for c in out if id(c) not in used]


def outputs(call):
    if call["tool"] in ("plot-metrics",):
        return call["positionals"][1:]
    if call["tool"] == "report-html":
        return []
    return [v for o, v in call["options"] if o in ("--out", "--report", "--picture", "--gallery", "--model-card")]


def inputs(call):
    if call["tool"] == "plot-metrics":
        return call["positionals"][:1]
    if call["tool"] == "report-html":
        return [call["positionals"][0] + "/report.json"]
    if call["tool"] == "tensorize" and call["sub"] == "merge":
        return call["positionals"]
    return [v for o, v in call["options"] if o in ("--in", "--data", "--model", "--positions", "--search")]


def check_dependencies(calls, jobs_path):
    depends = {}
    for line in open(jobs_path):
        job, _script, *deps = line.split()
        depends[job] = set(deps)

    def before(job):  # the jobs `job` runs after, directly or not
        seen, todo = set(), list(depends.get(job, ()))
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(depends.get(j, ()))
        return seen

    made = {}
    for c in calls:
        for f in outputs(c):
            made[f] = c["job"]
    problems = []
    for c in calls:
        for f in inputs(c):
            producer = made.get(f) or next((j for p, j in made.items() if f.startswith(p + "/")), None)
            if producer is None:
                problems.append(f"{key(c)}: reads {f}, which no job makes")
            elif producer != c["job"] and producer not in before(c["job"]):
                problems.append(f"job {c['job']} ({key(c)}) reads {f} from job {producer} without depending on it")
    return problems


def main():
    make_log, slurm_log, jobs, *pairs = sys.argv[1:]
    prefixes = sorted((tuple(p.split("=", 1)) for p in pairs), key=lambda p: -len(p[0]))
    make_calls = load(make_log, prefixes)
    slurm_calls = load(slurm_log, prefixes)
    problems = check_dependencies(slurm_calls, jobs)
    made_by_make = collections.Counter(key(c) for c in make_calls)
    made_by_slurm = collections.Counter(key(c) for c in join_merged(slurm_calls))
    for k in sorted((made_by_make - made_by_slurm).elements()):
        problems.append(f"make runs, the Slurm jobs do not: {k}")
    for k in sorted((made_by_slurm - made_by_make).elements()):
        problems.append(f"the Slurm jobs run, make does not: {k}")
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print(f"ok: {sum(made_by_make.values())} calls the same")


if __name__ == "__main__":
    main()
