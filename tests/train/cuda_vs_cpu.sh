#!/bin/sh
# The CUDA backend (double-buffered copies, the step replayed as a CUDA
# graph) trains the same model as the CPU reference: same cache, seed and
# batches, 40 steps on each. Every step's training loss must agree to a
# relative 2e-3 (float sums run in another order on the GPU), and so must
# the validation loss at the end. Exits 77 (skipped) without a usable GPU.
# `mix`: the same on a --mix of two caches of one S (4..6 and 7..9 nodes,
# twin and independent worlds: compact mixture batches on the GPU, dense
# ones on the CPU), validated on a third. `rows`: on a cache whose
# interventional worlds hold fewer rows than S (--inter-samples 40 over up
# to 9 worlds of S = 32: AVICI's regimes), independent worlds.
# Usage: cuda_vs_cpu.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR [mix|rows]
set -eu
gen=$1 train=$2 dir=$3 what=${4:-cache}
rm -rf "$dir" && mkdir -p "$dir"
if [ "$what" = mix ]; then
  "$gen" --out "$dir/a" --graphs 400 --samples 32 --nodes 4:6 --seed 11 --threads 2 --quiet
  "$gen" --out "$dir/b" --graphs 300 --samples 32 --nodes 7:9 --seed 12 --threads 2 --quiet --worlds independent
  "$gen" --out "$dir/v" --graphs 60 --samples 32 --nodes 4:9 --seed 13 --threads 2 --quiet
  src="--mix $dir/a=2,$dir/b=1 --val-cache $dir/v"
elif [ "$what" = rows ]; then
  "$gen" --out "$dir/cache" --graphs 600 --samples 32 --inter-samples 40 --nodes 4:9 --seed 11 --threads 2 \
    --quiet --worlds independent
  src="--cache $dir/cache"
else
  "$gen" --out "$dir/cache" --graphs 600 --samples 32 --nodes 4:9 --seed 11 --threads 2 --quiet
  src="--cache $dir/cache"
fi
common="$src --batch 16 --steps 40 --eval-every 40 --threads 2 --seed 4 --warmup 5 --quiet"
set +e
err=$("$train" $common --device cuda --log "$dir/cuda.csv" 2>&1 >/dev/null)
rc=$?
set -e
case "$err" in
  *"no usable CUDA device"* | *"built without CUDA"* | *"test allocation failed"*)
    echo "cuda_vs_cpu: no usable GPU, skipped ($err)"
    exit 77 ;;
esac
if [ "$rc" -ne 0 ]; then
  echo "FAIL: the CUDA run exited $rc: $err"
  exit 1
fi
"$train" $common --device cpu --log "$dir/cpu.csv"
# columns: step,train_loss,lr,val_loss,...
paste -d, "$dir/cuda.csv" "$dir/cpu.csv" | tail -n +2 | awk -F, -v n=8 '
  function bad(a, b) { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; return d > 2e-3 * (m > 1e-3 ? m : 1e-3) }
  { rows++
    if (bad($2, $(2 + n))) { printf "FAIL: step %s train loss cuda %s cpu %s\n", $1, $2, $(2 + n); fail = 1 }
    if ($4 != "" && bad($4, $(4 + n))) { printf "FAIL: step %s val loss cuda %s cpu %s\n", $1, $4, $(4 + n); fail = 1 }
    if ($4 != "") printf "step %s: val loss cuda %s cpu %s\n", $1, $4, $(4 + n) }
  END { if (rows != 40) { print "FAIL: expected 40 rows, got " rows; exit 1 }
        if (fail) exit 1
        print "cuda_vs_cpu: 40 steps agree" }'
rm -rf "$dir"
