#!/usr/bin/env bash
# scripts/plot-metrics reads metrics.csv's columns by header name: the same curves with a column
# inserted and the others reordered draw the same picture, and a missing column is one error line.
set -euo pipefail
root=${1:?usage: plot_metrics.sh SOURCE_DIR}
plot=$root/scripts/plot-metrics
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/a/run" "$tmp/b/run" "$tmp/c/run"
# train's own order (lib/train/metrics.cpp METRICS_COLUMNS)
cat > "$tmp/a/run/metrics.csv" <<'CSV'
step,epoch,samples,train_loss,val_loss,precision,recall,f1,samples_per_s,lr,elapsed_s
100,0.1000,25600,0.0100,0.00900,0.90000,0.80000,0.84706,5000.0,0.001,5.1
200,0.2000,51200,0.0050,0.00400,0.95000,0.90000,0.92432,5100.0,0.001,10.2
300,0.3000,76800,0.0030,0.00250,0.98000,0.96000,0.96990,5200.0,0.0005,15.3
CSV
# the same values, a new column first and the rest in another order
awk -F, -v OFS=, '{ extra = NR == 1 ? "grad_norm" : 7 + NR
  print extra, $7, $1, $11, $5, $3, $2, $6, $4, $8, $9, $10 }' "$tmp/a/run/metrics.csv" > "$tmp/b/run/metrics.csv"
"$plot" "$tmp/a/run" "$tmp/a.png"
"$plot" "$tmp/b/run" "$tmp/b.png"
cmp -s "$tmp/a.png" "$tmp/b.png" || { echo "FAIL: a reordered metrics.csv plots differently" >&2; exit 1; }
# a column train no longer writes: one line naming it, exit 1, no picture
cut -d, -f1-4,6- "$tmp/a/run/metrics.csv" > "$tmp/c/run/metrics.csv"
if "$plot" "$tmp/c/run" "$tmp/c.png" 2> "$tmp/err"; then echo "FAIL: a missing column was accepted" >&2; exit 1; fi
grep -qx "plot-metrics: $tmp/c/run/metrics.csv has no column 'val_loss'" "$tmp/err" ||
  { echo "FAIL: unexpected message: $(cat "$tmp/err")" >&2; exit 1; }
[[ ! -e $tmp/c.png ]] || { echo "FAIL: a picture was written" >&2; exit 1; }
echo "plot-metrics: columns read by name"
