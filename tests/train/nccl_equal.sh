#!/bin/sh
# The CUDA backend's NCCL sums (train/tc_nccl.c) train as one process does.
#   two: `mpirun -np 2 twincache-train --device cuda --batch 4` (one GPU a
#        rank, ncclAllReduce on the device) against one process at --batch 8:
#        every logged value of the 50 steps within 1e-5 relative, as
#        dist_equal.sh demands of the CPU backend. Needs 2 visible GPUs (NCCL
#        refuses two ranks on one device) and MPIEXEC.
#   one: one process with --nccl (a sum over one rank: the weighting around
#        it is the only difference) against the plain run, same batch; no
#        MPI launcher needed.
# Exits 77 (skipped) without a usable GPU, without NCCL (libnccl.so.2 or
# $TWINCACHE_NCCL_LIBRARY), or, for two, without 2 GPUs or MPIEXEC.
# Usage: nccl_equal.sh one|two MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
mode=$1 mpiexec=$2 gen=$3 train=$4 dir=$5
here=$(dirname "$0")
rm -rf "$dir" && mkdir -p "$dir"
common="--cache $dir/cache --val-split 0.2 --device cuda --steps 50 --eval-every 10 --threads 1 --seed 3"
skip() { echo "nccl_equal $mode: skipped: $1"; rm -rf "$dir"; exit 77; }

# a GPU, and how many (the device is picked before the cache is opened)
set +e
probe=$("$train" $common 2>&1)
set -e
case "$probe" in
  *"no usable CUDA device"* | *"built without CUDA"* | *"test allocation failed"*) skip "no usable GPU" ;;
esac
gpus=$(printf '%s\n' "$probe" | sed -n 's/^device: cuda [0-9]* of \([0-9]*\) .*/\1/p')
echo "probe: $(printf '%s\n' "$probe" | grep '^device:')"
"$gen" --out "$dir/cache" --graphs 200 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
# NCCL: one short run with --nccl
set +e
probe=$("$train" $common --nccl --batch 4 --steps 1 --eval-every 1 2>&1)
set -e
case "$probe" in
  *"cannot load NCCL"*) skip "no NCCL: $probe" ;;
esac
printf '%s\n' "$probe" | grep "over NCCL" || { echo "FAIL: the --nccl run did not use NCCL:"; echo "$probe"; exit 1; }

"$train" $common --quiet --batch 8 --log "$dir/w1.csv"
if [ "$mode" = two ]; then
  [ "${gpus:-0}" -ge 2 ] || skip "${gpus:-0} visible GPU(s); two ranks need two"
  command -v "$mpiexec" >/dev/null 2>&1 || skip "no MPI launcher $mpiexec"
  "$mpiexec" --oversubscribe --allow-run-as-root --timeout 120 -np 2 "$train" $common --quiet --batch 4 \
    --log "$dir/w2.csv"
  name="nccl_equal two (1 rank at 8, 2 ranks at 4, CUDA + NCCL)"
else
  "$train" $common --quiet --batch 8 --nccl --log "$dir/w2.csv"
  name="nccl_equal one (plain, and --nccl on one rank, at 8)"
fi
tail -n +2 "$dir/w1.csv" >"$dir/w1.rows"
tail -n +2 "$dir/w2.csv" | paste -d, "$dir/w1.rows" - | awk -F, -v rows=50 -v name="$name" -f "$here/logs_close.awk"
rm -rf "$dir"
