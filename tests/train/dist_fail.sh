#!/bin/sh
# A rank that fails ends the whole job with its message, never a hang: rank 1
# of 2 is given a missing cache while rank 0 has a good one and would wait
# for it in the gradient all-reduce. The job must end with a non-zero status
# and rank 1's message; it is bounded by the launcher (mpirun --timeout),
# whose own message would show a hang.
# Usage: dist_fail.sh MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
mpiexec=$1 gen=$2 train=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
"$gen" --out "$dir/cache" --graphs 64 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--device cpu --batch 4 --steps 1000 --threads 1 --seed 3 --quiet"
for bad in 0 1; do # the failing rank: 1 (rank 0 waits for it), then 0
  if [ $bad = 1 ]; then c0="$dir/cache" c1="$dir/missing"; else c0="$dir/missing" c1="$dir/cache"; fi
  set +e
  $mpiexec --oversubscribe --allow-run-as-root --timeout 60 \
    -np 1 "$train" --cache "$c0" $common : -np 1 "$train" --cache "$c1" $common >"$dir/out" 2>&1
  rc=$?
  set -e
  if [ "$rc" -eq 0 ] || ! grep -q "cannot open cache: $dir/missing" "$dir/out" ||
     grep -qi "timeout\|timed out" "$dir/out"; then
    echo "FAIL (rank $bad given a missing cache): exit $rc, want non-zero with its message and no timeout:"
    cat "$dir/out"
    exit 1
  fi
  echo "rank $bad failing ended the job (exit $rc): $(grep "cannot open cache" "$dir/out")"
done
