#!/usr/bin/env bash
# The trainer's GPU numbers in one run (needs a usable CUDA GPU and a build
# with CUDA, e.g. build/release made by run-tests.sh or run-demo.sh):
#   1. the CUDA kernels against their CPU references (ctest train_kernels_cuda)
#      and the GPU time of each stage of a step (bench_kernels_cuda)
#   2. a default-workload cache and a random-MLP cache (twincache-gen)
#   3. plain pinned cudaMemcpy of one batch slab (--bench-h2d): the limit
#   4. training, double-buffered and --sync-copies, at batch 32 and 256:
#      graphs/s, host and compute-stream waits, H2D GB/s against the limit
#   5. learning on the GPU: linear and MLP workloads against the |T| baseline
#   6. the loader alone for 1..T decode threads (twincache-loader-bench)
# and prints the tables last. Logs and JSON lines go to WORK_DIR.
#
# usage: bench/bench-gpu.sh [BUILD_DIR] [WORK_DIR]
#   env: GRAPHS (default 100000), STEPS (default 2000), THREADS (loader
#        decode threads; default: online cores - 2, at least 2)
set -euo pipefail
bin=${1:-build/release}
work=${2:-bench-gpu}
GRAPHS=${GRAPHS:-100000}
STEPS=${STEPS:-2000}
cores=$(nproc 2>/dev/null || echo 2)
THREADS=${THREADS:-$((cores > 4 ? cores - 2 : 2))}

for exe in gen/twincache-gen train/twincache-train bench/twincache-loader-bench; do
  [ -x "$bin/$exe" ] || { echo "bench-gpu: $bin/$exe not found: build first" >&2; exit 1; }
done
[ -x "$bin/tests/train/test_train_kernels_cuda" ] ||
  { echo "bench-gpu: $bin was built without CUDA (nvcc not found at configure time)" >&2; exit 1; }
mkdir -p "$work"
log=$work/log.txt
: >"$log"

# jget KEY FILE: the value of "KEY": in a one-line JSON object
jget() { grep -o "\"$1\": [^,}]*" "$2" | head -n 1 | sed 's/^[^:]*: //'; }

echo "== 1. CUDA kernels vs CPU references"
set +e
"$bin/tests/train/test_train_kernels_cuda" | tee -a "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -eq 77 ]; then echo "bench-gpu: no usable CUDA GPU" >&2; exit 1; fi
[ "$rc" -eq 0 ] || { echo "bench-gpu: CUDA kernels differ from their references" >&2; exit 1; }

echo "== 1b. GPU time per stage of one training step (synthetic batches)"
for g in 32 256; do
  "$bin/bench/bench_kernels_cuda" "$g" 10 64 200 | tee -a "$log" >"$work/kernels-$g.txt"
done

echo "== 2. caches ($GRAPHS default graphs, 20000 MLP graphs; $cores generator threads)"
"$bin/gen/twincache-gen" --out "$work/linear" --graphs "$GRAPHS" --seed 7 --threads "$cores" --quiet
"$bin/gen/twincache-gen" --out "$work/mlp" --graphs 20000 --seed 7 --mechanism mlp \
  --threads "$cores" --quiet

echo "== 3. plain pinned cudaMemcpy of one slab"
for g in 32 256; do
  "$bin/train/twincache-train" --cache "$work/linear" --batch "$g" --bench-h2d --json \
    >"$work/h2d-$g.json"
  cat "$work/h2d-$g.json" >>"$log"
done

echo "== 4. training: double-buffered vs --sync-copies ($STEPS steps)"
# runs: batch, path, decode threads
runs="32:overlap:$THREADS 32:sync:$THREADS 256:overlap:$THREADS 256:sync:$THREADS"
for t in 2 4 8; do [ "$t" -lt "$THREADS" ] && runs="$runs 256:overlap:$t"; done
for run in $runs; do
  IFS=: read -r g mode t <<<"$run"
  flag=""
  [ "$mode" = sync ] && flag=--sync-copies
  "$bin/train/twincache-train" --cache "$work/linear" --batch "$g" --steps "$STEPS" \
    --threads "$t" --val-split 0.1 --eval-every "$STEPS" --device cuda --json $flag \
    >"$work/train-$g-$mode-$t.json" 2>>"$log"
  cat "$work/train-$g-$mode-$t.json" >>"$log"
done

echo "== 5. learning on the GPU (batch 32, 1500 steps, seed 1, like BENCHMARKS.md's CPU rows)"
for w in linear mlp; do
  "$bin/train/twincache-train" --cache "$work/$w" --batch 32 --steps 1500 --seed 1 \
    --threads "$THREADS" --val-split 0.1 --device cuda --json >"$work/learn-$w.json" 2>>"$log"
  cat "$work/learn-$w.json" >>"$log"
done

echo "== 6. the loader alone (batch 256)"
loader_threads="1 2 4"
[ "$THREADS" -gt 4 ] && loader_threads="$loader_threads $THREADS"
for t in $loader_threads; do
  "$bin/bench/twincache-loader-bench" --cache "$work/linear" --threads "$t" --batch 256 \
    --json >"$work/loader-$t.json" 2>>"$log"
  cat "$work/loader-$t.json" >>"$log"
done

echo
cat "$work/kernels-32.txt" "$work/kernels-256.txt"
echo
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown), $cores CPU cores"
echo
echo "Data path ($STEPS steps; copy wait = compute stream stalled on a copy, event-timed;"
echo "host wait = trainer blocked in the loader; decode = graphs/s per busy decode thread)"
printf '%5s %-15s %3s %9s %8s %8s %9s %9s %8s %8s %6s %8s\n' batch path thr graphs/s ms/step \
  gpu-ms host-wait copy-wait 'H2D GB/s' 'pin GB/s' H2D/pin decode
pct() { awk -v x="$1" 'BEGIN { printf "%.2f%%", 100 * x }'; }
for run in $runs; do
  IFS=: read -r g mode t <<<"$run"
  f=$work/train-$g-$mode-$t.json
  pin=$(jget pinned_memcpy_h2d_gb_per_s "$work/h2d-$g.json")
  h2d=$(jget h2d_gb_per_s "$f")
  printf '%5s %-15s %3s %9.0f %8.3f %8.3f %9s %9s %8.2f %8.2f %5.0f%% %8.0f\n' "$g" \
    "$([ "$mode" = sync ] && echo --sync-copies || echo double-buffered)" "$t" \
    "$(jget graphs_per_s "$f")" "$(jget ms_per_step "$f")" "$(jget compute_ms_per_step "$f")" \
    "$(pct "$(jget host_wait_fraction "$f")")" "$(pct "$(jget copy_wait_fraction "$f")")" \
    "$h2d" "$pin" "$(awk -v a="$h2d" -v b="$pin" 'BEGIN { print (b > 0) ? 100 * a / b : 0 }')" \
    "$(jget decode_graphs_per_thread_s "$f")"
done
echo
echo "Learning on the GPU (held-out 10%; model vs |T| baseline)"
printf '%-8s %8s %8s %7s %10s %10s %8s %10s\n' cache AUPRC AUROC SHD 'base AUPRC' 'base AUROC' \
  'base SHD' graphs/s
for w in linear mlp; do
  f=$work/learn-$w.json
  printf '%-8s %8s %8s %7s %10s %10s %8s %10.0f\n' "$w" "$(jget val_auprc "$f")" \
    "$(jget val_auroc "$f")" "$(jget val_shd "$f")" "$(jget baseline_auprc "$f")" \
    "$(jget baseline_auroc "$f")" "$(jget baseline_shd "$f")" "$(jget graphs_per_s "$f")"
done
echo
echo "Loader alone (batch 256; zstd limit = plain ZSTD_decompress on one thread)"
printf '%8s %12s %12s %14s %12s\n' threads graphs/s 'batch GB/s' 'zstd GB/s/thr' 'memcpy GB/s'
for t in $loader_threads; do
  f=$work/loader-$t.json
  printf '%8s %12.0f %12.2f %14.2f %12.2f\n' "$t" "$(jget graphs_per_s "$f")" \
    "$(jget batch_gb_per_s "$f")" "$(jget zstd_limit_gb_per_s "$f")" "$(jget memcpy_gb_per_s "$f")"
done
