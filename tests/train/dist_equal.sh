#!/bin/sh
# Data parallel is the bigger batch: `mpirun -np 2 twincache-train --batch 4`
# must train as one process at --batch 8 — same graphs per step (rank r of 2
# takes every 2nd batch of 4 of the same epoch order, which together are the
# one process's batch of 8; 160 training graphs, so epochs end alike), the
# gradients combined as one batch's. Every logged value (train loss,
# validation loss, AUROC, AUPRC, SHD) of the 50 steps within 1e-5 relative;
# and a checkpoint of the 2-rank run resumes at 2 ranks, refused at 1.
# Usage: dist_equal.sh MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
mpiexec=$1 gen=$2 train=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
mpi="$mpiexec --oversubscribe --allow-run-as-root --timeout 120"
"$gen" --out "$dir/cache" --graphs 200 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--cache $dir/cache --val-split 0.2 --device cpu --steps 50 --eval-every 10 --threads 1 --seed 3 --quiet"
"$train" $common --batch 8 --log "$dir/w1.csv"
$mpi -np 2 "$train" $common --batch 4 --log "$dir/w2.csv" --checkpoint "$dir/ck" --checkpoint-every 25
paste -d, "$dir/w1.csv" "$dir/w2.csv" | awk -F, '
  NR == 1 { next }
  { rows++
    for (k = 2; k <= 7; k++) {
      if ($k == "" && $(k + 8) == "") continue
      if (k == 3) continue # the learning rate: a schedule, equal anyway
      d = $k - $(k + 8); if (d < 0) d = -d
      s = $k < 0 ? -$k : $k
      if (d > 1e-5 * s) { printf "FAIL: step %s column %d: 1 rank %s, 2 ranks %s\n", $1, k, $k, $(k + 8); bad = 1 }
      if (d / (s > 0 ? s : 1) > worst) worst = d / (s > 0 ? s : 1)
    } }
  END { if (rows != 50) { print "FAIL: " rows " rows, want 50"; exit 1 }
        printf "dist_equal: 50 steps, largest relative difference %.3g\n", worst; exit bad }'
# resume: same world size continues, another one is refused (no elastic state yet)
$mpi -np 2 "$train" $common --batch 4 --steps 60 --resume "$dir/ck" --log "$dir/w2r.csv"
set +e
"$train" $common --batch 4 --steps 60 --resume "$dir/ck" 2>"$dir/err"
rc=$?
set -e
if [ "$rc" -ne 1 ] || ! grep -q "written by 2 rank(s), this run has 1" "$dir/err"; then
  echo "FAIL: resume at another world size: exit $rc, want 1 and a refusal naming both sizes:"
  cat "$dir/err"
  exit 1
fi
echo "resume at another world size refused: $(cat "$dir/err")"
