#!/bin/sh
# Data parallel is the bigger batch: `mpirun -np 2 twincache-train --batch 4`
# must train as one process at --batch 8 — same graphs per step (rank r of 2
# takes every 2nd batch of 4 of the same epoch order, which together are the
# one process's batch of 8; 160 training graphs, so epochs end alike), the
# gradients combined as one batch's. Every logged value (train loss,
# validation loss, AUROC, AUPRC, SHD) of the 50 steps within 1e-5 relative;
# and a checkpoint of the 2-rank run resumes at 2 ranks (another world size:
# dist_elastic.sh).
# Usage: dist_equal.sh MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
mpiexec=$1 gen=$2 train=$3 dir=$4
here=$(dirname "$0")
rm -rf "$dir" && mkdir -p "$dir"
mpi="$mpiexec --oversubscribe --allow-run-as-root --timeout 120"
"$gen" --out "$dir/cache" --graphs 200 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--cache $dir/cache --val-split 0.2 --device cpu --steps 50 --eval-every 10 --threads 1 --seed 3 --quiet"
"$train" $common --batch 8 --log "$dir/w1.csv"
$mpi -np 2 "$train" $common --batch 4 --log "$dir/w2.csv" --checkpoint "$dir/ck" --checkpoint-every 25
tail -n +2 "$dir/w1.csv" >"$dir/w1.rows"
tail -n +2 "$dir/w2.csv" | paste -d, "$dir/w1.rows" - |
  awk -F, -v rows=50 -v name="dist_equal (1 rank at 8, 2 ranks at 4)" -f "$here/logs_close.awk"
# resume: the same world size continues
$mpi -np 2 "$train" $common --batch 4 --steps 60 --resume "$dir/ck" --log "$dir/w2r.csv"
[ "$(tail -n 1 "$dir/w2r.csv" | cut -d, -f1)" = 60 ] || { echo "FAIL: the resumed run did not reach step 60"; exit 1; }
echo "resume at the same world size: steps 51..60 trained"
