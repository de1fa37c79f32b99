#!/bin/sh
# A cache of independent worlds trains, and the plan says what the model's
# twin-difference features measure there (rows paired without shared noise);
# a twin cache's plan says nothing of it. A cache whose worlds hold fewer
# rows than S (--inter-samples, AVICI's regimes) trains on the device
# --device auto picks (the CUDA one against the CPU: cuda_vs_cpu.sh rows).
# Usage: worlds.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
gen=$1 train=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
common="--device cpu --batch 8 --steps 4 --eval-every 2 --threads 2 --seed 3"
for w in twin independent; do
  "$gen" --out "$dir/$w" --graphs 64 --samples 16 --nodes 4:6 --seed 5 --threads 2 --worlds $w --quiet
  out=$("$train" --cache "$dir/$w" $common 2>&1) || fail "$w: training failed: $out"
  if printf '%s\n' "$out" | grep -q "^worlds: independent .*share no noise"; then said=1; else said=0; fi
  case $w in
    twin) [ $said -eq 0 ] || fail "twin cache: the independent-worlds line: $out" ;;
    independent) [ $said -eq 1 ] || fail "independent cache: no worlds line: $out" ;;
  esac
done
echo "worlds lines as expected"
"$gen" --out "$dir/rows" --graphs 64 --samples 16 --inter-samples 8 --targets 2 --nodes 4:6 --seed 5 --threads 2 \
  --quiet
out=$("$train" --cache "$dir/rows" --batch 8 --steps 4 --eval-every 2 --threads 2 --seed 3 2>&1) ||
  fail "fewer rows per world: training failed: $out"
echo "fewer rows per world: trains ($(printf '%s\n' "$out" | head -1))"
