#!/usr/bin/env bash
# Runs every benchmark of bench/ on one machine and prints their tables:
#   1. generator (twincache-gen-bench): default workload, 1 and 2 threads
#   2. frame codec and encodings (bench_format, bench_frames), the stream plan (bench_plan)
#   3. the loader (twincache-loader-bench) on a fresh default cache, dense
#      and compact layouts, and at N=40-50; fresh and warm maps
#   4. the Python loop over twincache.Loader against the C loader
#   5. with a usable CUDA GPU: bench/bench-gpu.sh (kernels, H2D, trainer)
# Every table states the limit it chases (zstd decode, memcpy, PCIe).
# usage: bench/run-all.sh [BUILD_DIR (default build/release)] [WORK_DIR (default bench-out)]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release}
work=${2:-bench-out}
for exe in gen/twincache-gen bench/twincache-gen-bench bench/twincache-loader-bench \
           bench/bench_format bench/bench_frames bench/bench_plan; do
  [ -x "$bin/$exe" ] || { echo "run-all: $bin/$exe not found: build first (cmake --build $bin)" >&2; exit 1; }
done
mkdir -p "$work"
rm -rf "$work/default" "$work/n50"
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

echo "== 1. generator"
"$bin/bench/twincache-gen-bench" --graphs 100000
echo "== 2. frame codec and encodings"
"$bin/bench/bench_format" 2000 3
"$bin/bench/bench_frames" 2000
echo "== 2b. the stream plan"
"$bin/bench/bench_plan" 1000000

echo "== 3. loader"
"$bin/gen/twincache-gen" --out "$work/default" --graphs 20000 --seed 11 --quiet
"$bin/gen/twincache-gen" --out "$work/n50" --graphs 4000 --seed 11 --nodes 40:50 --edge-prob 0.1 --quiet
# each layout twice: a fresh map per run (a first epoch) and --warm (the
# cache held open: later epochs, what a long training run sees)
for layout in dense compact; do
  for map in fresh warm; do
    flag=""
    [ "$map" = warm ] && flag=--warm
    echo "-- default workload, $layout, $map map"
    "$bin/bench/twincache-loader-bench" --cache "$work/default" --layout "$layout" $flag
    echo "-- N=40-50, $layout, $map map"
    "$bin/bench/twincache-loader-bench" --cache "$work/n50" --layout "$layout" $flag
  done
done

echo "== 4. Python loop vs C loader"
if /usr/bin/python3 -c 'import numpy, torch' 2>/dev/null; then
  TWINCACHE_LIBRARY=$(ls "$bin"/libtwincache.so* 2>/dev/null | head -1) \
    /usr/bin/python3 bench/python_loader_bench.py --cache "$work/default"
else
  echo "skipped: /usr/bin/python3 lacks numpy or torch (tools/install-deps.sh installs them)"
fi

echo "== 5. GPU"
if [ -x "$bin/bench/bench_kernels_cuda" ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  bench/bench-gpu.sh "$bin" "$work/gpu"
else
  echo "skipped: no CUDA build or no usable GPU"
fi
