#!/bin/sh
# tools/gpu-check.sh on a machine without a GPU (CI): the three paths that
# run there.
#  1. no GPU (CUDA_VISIBLE_DEVICES=-1 hides any): one line, exit 77;
#  2. --dry-run (every step with its CPU twin, tiny sizes): exit 0, every
#     check passed or not run, the report has its sections and the sampler's
#     bit-for-bit table one row per check cache with 0 graphs differing;
#  3. a check failing on purpose (TWINCACHE_GPU_CHECK_FAULT=1): exit 1, and
#     the report names the failed check.
# usage: gpu_check.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -u
src=$1 bin=$2 dir=$3
script=$src/tools/gpu-check.sh
rm -rf "$dir" && mkdir -p "$dir"
fail=0
no() { echo "FAIL: $*"; fail=1; }

out=$(CUDA_VISIBLE_DEVICES=-1 bash "$script" "$bin" "$dir/nogpu" 2>&1)
rc=$?
[ "$rc" -eq 77 ] || no "no GPU: exit $rc, not 77: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || no "no GPU: more than one line: $out"
[ -e "$dir/nogpu" ] && no "no GPU: it wrote a report folder"

bash "$script" --dry-run "$bin" "$dir/dry" >"$dir/dry.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || { cat "$dir/dry.out"; no "dry run: exit $rc"; }
r=$dir/dry/report.md
for h in "## Checks" "## Sampler: kernel vs CPU loader" "### sample-check" "### sample-time-avici" \
  "## Trainer" "## NCCL overhead at W = 1" "## Python loop"; do
  grep -q "^$h" "$r" 2>/dev/null || no "dry run: the report lacks '$h'"
done
grep -q '| FAIL' "$r" && no "dry run: a check failed: $(grep '| FAIL' "$r")"
for c in "trainer: predict another N, K, S (no --cache)" "trainer: withheld do() targets read back (same file)" \
  "trainer: another validation shape evaluated on the CPU"; do
  grep -qF "| $c | pass |" "$r" || no "dry run: no passed '$c'"
done
grep -q '^| trainer: NCCL overhead (W = 1, batch 256) | not run | .* needs a GPU |' "$r" ||
  no "dry run: the NCCL timing is not listed as not run"
if [ -x "$bin/bench/bench_sample_cuda" ]; then # a CUDA build: the emulated kernel ran
  rows=$(sed -n '/^### sample-check/,/^### sample-time-default/p' "$r" | grep -c '^| [a-z].* |  *0 | ')
  [ "$rows" -ge 18 ] || no "dry run: $rows caches compared bit for bit with 0 differing (want >= 18)"
  grep -q '^| soft-linear .*refused by the SCM loader' "$r" || no "dry run: the soft cache is not shown refused"
  grep -q '^| avici  *|  800 ' "$r" || no "dry run: no AVICI-scale row"
  # the trainer with the CUDA backend loaded from its plugin: the same refusal and CPU run
  grep -qF "| test: cuda_dlopen (tree's plugin) | pass |" "$r" || no "dry run: no passed cuda_dlopen (tree's plugin)"
fi

TWINCACHE_GPU_CHECK_FAULT=1 bash "$script" --dry-run "$bin" "$dir/fault" >"$dir/fault.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || no "a failing check: exit $rc, not 1"
grep -q '| sampler: kernel = CPU loader, bit for bit | FAIL |' "$dir/fault/report.md" 2>/dev/null ||
  no "a failing check: the report does not name it"
[ "$fail" -eq 0 ] && echo "gpu_check: ok"
exit "$fail"
