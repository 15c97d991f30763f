#!/usr/bin/env bash
# slurm_single_node.sh SOURCE_DIR BIN_DIR PYTHON: the cluster path for real. Starts a private
# single-node Slurm on localhost (munged + slurmctld + slurmd from Debian's packages, configured
# in a temporary folder, on free ports), submits slurm/submit.sh with a small run (a data array
# of 2 shards, the placement and the lopsided games, the test and position sets, the merge, a training job of
# 2 processes that meet through c10d, and the report), waits for the jobs and checks what they
# made. (tests/cluster/slurm_commands.sh checks, without Slurm, that the jobs run make's
# commands.) Cleans up after itself.
# Exits 77 (skipped) where it cannot run: not root, or Slurm/munge not installed.
set -euo pipefail
source_dir=$1 bin=$2 python=$3

for program in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$program" >/dev/null || { echo "skipped: $program is not installed (apt: slurm-wlm munge)"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "skipped: slurmd must run as root to start jobs"; exit 77; }

work=$(mktemp -d /tmp/legalnet-slurm.XXXXXX)
chmod 755 "$work"
cleanup() {
  scancel --quiet --full --user=root 2>/dev/null || true
  for pid_file in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge/munged.pid"; do
    [[ -f $pid_file ]] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for f in "$work"/jobs/*.out "$work"/log/*.log; do
    [[ -f $f ]] && { echo "---- $f"; tail -n 30 "$f"; }
  done
  exit 1
}

# munge: a fresh key, its own socket.
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log" "$work/jobs"
chmod 700 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/munge/seed"

# Slurm: one node (this machine, as many CPUs as it has, 90% of its memory), one partition.
read -r controller_port node_port master_port < <("$python" -c '
import socket
sockets = [socket.socket() for _ in range(3)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')
host=$(hostname -s)
memory_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))
cat >"$work/slurm.conf" <<EOF
ClusterName=legalnet-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$controller_port
SlurmdPort=$node_port
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DependencyParameters=kill_invalid_depend
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=legalnet-node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$memory_mb State=UNKNOWN
PartitionName=test Nodes=legalnet-node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N legalnet-node
for ((i = 0; ; ++i)); do
  [[ $(sinfo -h -o %T 2>/dev/null) == idle ]] && break
  ((i < 60)) || fail "the node did not come up"
  sleep 0.5
done

# The pipeline, small (the cluster's recipe, recipes/gpu.toml, made small by make's variables):
# 2 shards of 150 games, 100 placement and 60 lopsided games, a tiny net trained by 2 processes.
cd "$work/jobs"
export LEGALNET_BIN=$bin DATA=$work/data SHARDS=2 TRAIN_GAMES=300 TEST_GAMES=40 SEED=7
export PLACEMENT_GAMES=100 PLACEMENT_MAX_PLIES=10 LOPSIDED_GAMES=60 LOPSIDED_MAX_PLIES=10 OOD_PLACEMENTS=50 OOD_DEPTH=1 EXHAUSTIVE_MATERIAL=none
export SAMPLED_MATERIAL='??' SAMPLED_POSITIONS=50
export TRAIN_TASKS=2 TRAIN_GPUS=0 TRAIN_CPUS=1 TRAIN_MEM=2G DEVICE=cpu
export BLOCKS=1 CHANNELS=8 BATCH=32 STEPS=40 EVAL_EVERY=20 TRAIN_PLY_LIMIT=120 RUN=$work/data/runs/test
export EVAL_GAMES=4 ADVERSARY_GAMES=2 SEARCH_STARTS=2 SEARCH_BUDGET=20 RANDOM_EDIT_BUDGET=10
export MASTER_PORT=$master_port OMP_WAIT_POLICY=PASSIVE
submitted=$("$source_dir/slurm/submit.sh")
echo "$submitted"

# Wait until every job has ended, then require all of them (array tasks included) completed.
for ((i = 0; ; ++i)); do
  [[ -z $(squeue -h) ]] && break
  ((i < 600)) || fail "jobs still queued after 5 minutes: $(squeue)"
  sleep 0.5
done
states=$(scontrol -o show job | grep -o 'JobId=[0-9]* .*JobState=[A-Z_]*' | sed 's/ .*JobState=/ /')
[[ $(wc -l <<<"$states") == 8 ]] || fail "expected 8 jobs (4 array tasks, sets, merge, train, report): $states"
grep -qv ' COMPLETED$' <<<"$states" && fail "not all jobs completed: $states"
# The products, in make's files.
for f in games/train-0.pgn.zst games/placement.pgn.zst tensors/shard-0.h5 tensors/shard-1.h5 tensors/placement.h5 \
  games/lopsided.pgn.zst tensors/lopsided.h5 \
  tensors/train.h5 tensors/test.h5 positions/placements.fen positions/perft-tree.fen positions/exhaustive.fen \
  positions/sampled-material.fen runs/test/model.safetensors runs/test/metrics.csv report/report.json \
  report/summary.txt report/metrics.csv report/loss.png report/report.html; do
  [[ -s $DATA/$f ]] || fail "$f is missing"
done
"$python" - "$DATA" <<'EOF' || fail "the products do not hold what they should"
import h5py, json, sys
data = sys.argv[1]
shards = [h5py.File(f"{data}/tensors/{name}.h5", "r") for name in ("shard-0", "shard-1", "placement", "lopsided")]
joined = h5py.File(f"{data}/tensors/train.h5", "r")
rows = sum(s["positions"].shape[0] for s in shards)
assert joined["positions"].shape == (rows, 7, 8, 8), joined["positions"].shape
assert joined["positions"].is_virtual, "the merge copied instead of joining"
assert (joined["positions"][-5:] == shards[3]["positions"][-5:]).all()
options = json.load(open(f"{data}/runs/test/options.json"))
assert options["processes"] == 2, options["processes"]
metrics = open(f"{data}/runs/test/metrics.csv").read().splitlines()
assert metrics[0].startswith("step,") and metrics[-1].startswith("40,"), metrics
assert int(metrics[-1].split(",")[2]) == 40 * 2 * 32, "samples: 2 processes x batch 32 per step"
report = json.load(open(f"{data}/report/report.json"))
assert report["games"]["games"] == 4, report["games"]
print(f"ok: {rows} positions in 2 shards, the placements and the lopsided games joined, trained by 2 processes, 4 games evaluated")
EOF
