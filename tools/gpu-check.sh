#!/usr/bin/env bash
# gpu-check.sh — every GPU path of twincache in one run on a lent GPU, with a
# build carried from a machine without one; one report, non-zero on failure.
#
#   1. the GPU tests: the CUDA test programs ctest runs (kernels, expansion,
#      GEMM, sampler; the CUDA trainer against the CPU one; the trainer with
#      the CUDA backend loaded from its plugin against the linked one, the
#      portable wheel's too when bundled) and the Python tests that need
#      CUDA (pytest -k cuda);
#   2. the fresh-world sampler kernel (twincache_sample_cuda) against the CPU
#      loader, bit for bit, on SCM-only caches of every mechanism, noise and
#      intervention kind it accepts (do, shift, noise; soft, multi-target and
#      iSCM caches are shown refused), independent worlds among them (each
#      world's noise from its own key, FORMAT.md 3.9), then timed: graphs/s
#      at the default workload, twin and independent, and at AVICI scale
#      (20-30 nodes, 800 rows, 3 targets, MLP) beside one CPU thread's;
#   3. the trainer: pinned memcpy of one slab (--bench-h2d), then training at
#      2, 4 and all decode threads (copy-wait %, H2D vs pinned GB/s; the
#      compact layout too when the trainer has --layout); a checkpoint
#      predicting a cache of another N, K, S, with its do() targets given
#      and withheld (the same file), and another validation shape refused
#      on CUDA with one line (evaluated on the CPU); NCCL's W = 1
#      overhead per step at batch 256 (--nccl against the plain run; the
#      issue's target is < 5%), and the Python loop with device="cuda"
#      (dense and compact);
#   4. the report: REPORT_DIR/report.md (Markdown tables, one status line per
#      check) and REPORT_DIR/logs/ (every command's output).
# Sized to finish in under 8 minutes on one H100 with 16 cores (each step
# has its own time limit), so a second run fits a 15-minute lease.
#
# usage:
#   tools/gpu-check.sh [BUILD_DIR|BUNDLE.tar.xz] [REPORT_DIR]
#        run it (default build/release, gpu-check)
#   tools/gpu-check.sh --dry-run [BUILD_DIR] [REPORT_DIR]
#        every step with its CPU twin (emulated kernels, --device cpu, tiny
#        sizes): checks this script's logic and report on a machine without a
#        GPU (ctest: tools_gpu_check_dry_run)
#   tools/gpu-check.sh --bundle BUILD_DIR DEST
#        copies what a run needs into DEST (created; build/ is ignored by git,
#        e.g. build/gpu-bundle): the programs and test programs, libtwincache,
#        and DEST/lib/ with every shared library `ldd` lists outside the CUDA
#        driver and glibc (libigraph, liblmdb, libzstd, libxxhash, libcudart,
#        their dependencies...), and DEST/wheel/ with the portable wheel's
#        trainer and CUDA plugin when a wheel was built ($TWINCACHE_WHEEL,
#        else build/wheel/dist/). DEST, or the archive DEST.tar.xz also
#        written, is then a BUILD_DIR for this script.
#
# Carrying the build to the GPU machine (it reaches nothing outside):
#   here:    cmake --build build/release -j2 && tools/gpu-check.sh --bundle build/release build/gpu-bundle
#   there:   tools/gpu-check.sh build/gpu-bundle.tar.xz gpu-report   (carry: build/gpu-bundle.tar.xz)
# (the folder itself, ~60 MiB, would not fit the carry's 64 MiB beside the
# working tree; its archive, ~18 MB, is unpacked into REPORT_DIR.bundle)
# The script puts DEST/lib first on LD_LIBRARY_PATH itself. The Python step
# needs a torch with CUDA on that machine (python3, or $TWINCACHE_PYTHON);
# without one it is reported as not run, not as passed. NCCL is not bundled:
# $TWINCACHE_NCCL_LIBRARY, else libnccl.so.2 from ldconfig, else the one of
# that Python's NVIDIA wheel (nvidia/nccl/lib); without one the NCCL steps
# are not run. The 2-rank NCCL test also needs 2 GPUs and $MPIEXEC (default
# mpiexec) on that machine.
#
# TWINCACHE_GPU_CHECK_FAULT=1 (tests only) runs only the sampler's
# bit-for-bit check, failing on purpose, and the report: the report and the
# exit status must say so.
# TWINCACHE_GPU_CHECK_NO_PYTHON=1 leaves the Python steps out (not run): a
# sanitizer build's library cannot be loaded into Python.
#
# Exit: 0 every check passed; 1 a check failed (the report names it); 2 usage;
# 77 no usable GPU (one line; nothing else run).
set -uo pipefail

usage() {
  sed -n '/^# usage:/,/^# Carrying/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

mode=run
case "${1:-}" in
  --dry-run) mode=dry; shift ;;
  --bundle) mode=bundle; shift ;;
  --help | -h) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  --*) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
[ $# -le 2 ] || usage
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/release}

# The programs a run uses, relative to BUILD_DIR (the CUDA ones only exist in
# a CUDA build).
progs="gen/twincache-gen train/twincache-train bench/twincache-loader-bench tools/twincache-inspect
bench/bench_sample_cuda bench/bench_kernels_cuda tests/train/test_train_kernels_cuda
tests/train/test_expand_cuda tests/train/test_gemm_cuda tests/train/test_sample_cuda"
# and, when built (a trainer linking CUDA also has them, for the tests): the
# trainer loading its CUDA backend from the plugin, and the plugin
optional="train/twincache-train-cuda-dlopen train/libtwincache_cuda.so"

# ---- --bundle ----------------------------------------------------------------
if [ "$mode" = bundle ]; then
  [ $# -eq 2 ] || usage
  dest=$2
  [ -x "$bin/gen/twincache-gen" ] || { echo "gpu-check: $bin/gen/twincache-gen not found: build first" >&2; exit 1; }
  [ -x "$bin/bench/bench_sample_cuda" ] ||
    { echo "gpu-check: $bin was built without CUDA (no bench/bench_sample_cuda): nothing to run on a GPU" >&2; exit 1; }
  rm -rf "$dest" && mkdir -p "$dest/lib" || exit 1
  for p in $progs; do
    [ -x "$bin/$p" ] || { echo "gpu-check: $bin/$p missing (build every target first)" >&2; exit 1; }
    mkdir -p "$dest/$(dirname "$p")" && cp "$bin/$p" "$dest/$p" || exit 1
  done
  for p in $optional; do
    [ -f "$bin/$p" ] && { cp "$bin/$p" "$dest/$p" || exit 1; }
  done
  # the portable wheel's trainer and CUDA plugin, when one was built
  # ($TWINCACHE_WHEEL, else build/wheel/dist's): its own layout, bin/ and lib/twincache/
  whl=${TWINCACHE_WHEEL:-$(ls "$here"/build/wheel/dist/twincache-*.whl 2>/dev/null | head -n 1)}
  if [ -n "$whl" ]; then
    mkdir -p "$dest/wheel/bin" "$dest/wheel/lib/twincache" &&
      /usr/bin/python3 - "$whl" "$dest/wheel" <<'PY' ||
import fnmatch, os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for pattern, to in (("twincache-*.data/scripts/twincache-train", "bin/twincache-train"),
                    ("twincache-*.data/data/lib/twincache/libtwincache_cuda.so", "lib/twincache/libtwincache_cuda.so")):
    name = next(n for n in z.namelist() if fnmatch.fnmatch(n, pattern))
    with open(os.path.join(sys.argv[2], to), "wb") as f:
        f.write(z.read(name))
    os.chmod(os.path.join(sys.argv[2], to), 0o755)
PY
      { echo "gpu-check: could not take the trainer and CUDA plugin out of $whl" >&2; exit 1; }
    echo "gpu-check: with the wheel's trainer and CUDA plugin ($(basename "$whl"))"
  fi
  lib=$(find "$bin" -maxdepth 2 -name 'libtwincache.so*' -type f | head -n 1)
  [ -n "$lib" ] || { echo "gpu-check: no libtwincache.so under $bin" >&2; exit 1; }
  cp "$lib" "$dest/lib/" && ln -sf "$(basename "$lib")" "$dest/lib/libtwincache.so" || exit 1
  # every library ldd resolves, but the CUDA driver's and glibc's own
  for f in "$dest"/*/* "$dest"/tests/train/* "$dest/lib/$(basename "$lib")"; do
    [ -f "$f" ] || continue
    ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
  done | sort -u | while read -r name path; do
    case "$name" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libcuda.so* | \
        libnvidia* | libtwincache.so*) ;;
      *) cp -L "$path" "$dest/lib/$name" ;;
    esac
  done
  # debug info stays here: the carry is limited (64 MiB in all)
  command -v strip >/dev/null && find "$dest" -type f ! -name '*.sh' -exec strip --strip-debug {} + 2>/dev/null
  # the carry's limit counts the working tree too: the folder (~60 MiB, 30 of
  # them Debian's ICU data under libigraph) travels as one xz archive (~18 MB)
  tar -C "$dest" -cf - . | xz -T0 -6 >"$dest.tar.xz.part" && mv "$dest.tar.xz.part" "$dest.tar.xz" ||
    { echo "gpu-check: could not write $dest.tar.xz (needs xz)" >&2; exit 1; }
  echo "gpu-check: bundle in $dest ($(du -sh "$dest" | cut -f1)) and $dest.tar.xz ($(du -sh "$dest.tar.xz" | cut -f1));"
  echo "  carry $dest.tar.xz and run: tools/gpu-check.sh $dest.tar.xz REPORT_DIR"
  exit 0
fi

work=${2:-gpu-check}
if [ -f "$bin" ] && [ "${bin%.tar.xz}" != "$bin" ]; then # a bundle's archive: unpacked beside the report
  unpacked=$(mkdir -p "$work.bundle" && cd "$work.bundle" && pwd) || exit 2
  rm -rf "${unpacked:?}"/* && { tar -C "$unpacked" -xJf "$bin" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$bin" "$unpacked"; } ||
    { echo "gpu-check: could not unpack $bin into $unpacked" >&2; exit 2; }
  bin=$unpacked
fi
[ -d "$bin" ] || { echo "gpu-check: build folder $bin not found (see --help)" >&2; exit 2; }
[ -d "$bin/lib" ] && export LD_LIBRARY_PATH="$(cd "$bin/lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for p in gen/twincache-gen train/twincache-train; do
  [ -x "$bin/$p" ] || { echo "gpu-check: $bin/$p not found: build first" >&2; exit 2; }
done
cores=$(nproc 2>/dev/null || echo 2)

# ---- is there a GPU? -----------------------------------------------------------
if [ "$mode" = run ]; then
  if [ ! -x "$bin/bench/bench_sample_cuda" ]; then
    echo "gpu-check: $bin was built without CUDA: no GPU check possible (exit 77)"
    exit 77
  fi
  "$bin/bench/bench_sample_cuda" --probe >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "gpu-check: no usable CUDA GPU here (skipped; --dry-run checks the script without one)"
    exit 77
  fi
fi

# ---- sizes -----------------------------------------------------------------------
if [ "$mode" = dry ]; then # small enough for CI on 2 cores
  CHECK_GRAPHS=24 DEFAULT_GRAPHS=256 AVICI_GRAPHS=16 TRAIN_GRAPHS=600 TRAIN_STEPS=20 REPEAT=1 GEN_THREADS=2
  THREAD_SET="2" DEVICE=cpu
else
  CHECK_GRAPHS=200 DEFAULT_GRAPHS=4096 AVICI_GRAPHS=512 TRAIN_GRAPHS=50000 TRAIN_STEPS=1500 REPEAT=20
  GEN_THREADS=$cores THREAD_SET="2 4 $cores" DEVICE=cuda
fi

rm -rf "$work" && mkdir -p "$work/logs" "$work/caches" || exit 1
work=$(cd "$work" && pwd)
logs=$work/logs
status=$work/status.txt # one line per check: NAME|pass|fail|not run|...|LOG|NOTE
: >"$status"
t_start=$(date +%s)

# record NAME RC LOG NOTE: a check's status line (77: not run)
record() {
  local s=pass
  [ "$2" -eq 77 ] && s="not run"
  [ "$2" -ne 0 ] && [ "$2" -ne 77 ] && s=FAIL
  [ "$2" -eq 124 ] && s="FAIL (time limit)"
  printf '%s|%s|%s|%s\n' "$1" "$s" "${3#"$work"/}" "${4:-}" >>"$status"
  printf '  %-40s %s\n' "$1" "$s"
}
# step NAME LIMIT_S LOG CMD...: runs CMD with a time limit, output to LOG, and records it
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  record "$name" "$rc" "$log"
  return "$rc"
}
gen() { "$bin/gen/twincache-gen" --threads "$GEN_THREADS" --quiet "$@"; }
# NCCL for the trainer's --nccl and 2-rank steps (tc_nccl.h's search order)
find_nccl() {
  [ -n "${TWINCACHE_NCCL_LIBRARY:-}" ] && return 0
  ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 ' && return 0
  local c d
  for c in ${TWINCACHE_PYTHON:-} python3; do
    d=$("$c" -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null) || continue
    [ -f "$d/lib/libnccl.so.2" ] && { export TWINCACHE_NCCL_LIBRARY=$d/lib/libnccl.so.2; return 0; }
  done
  return 1
}
jget() { grep -o "\"$1\": [^,}]*" "$2" 2>/dev/null | head -n 1 | sed 's/^[^:]*: //'; }

echo "gpu-check: $mode, build $bin, report $work"

fault=${TWINCACHE_GPU_CHECK_FAULT:-0} # 1: only the sampler's check (failing) and the report
# ---- 1. the GPU tests ------------------------------------------------------------
echo "== 1. GPU tests"
if [ "$fault" != 1 ]; then
if [ "$mode" = run ]; then
  for t in test_train_kernels_cuda test_expand_cuda test_gemm_cuda test_sample_cuda; do
    step "test: $t" 120 "$logs/$t.log" "$bin/tests/train/$t"
  done
  step "test: train_cuda_vs_cpu" 180 "$logs/cuda_vs_cpu.log" \
    sh "$here/tests/train/cuda_vs_cpu.sh" "$bin/gen/twincache-gen" "$bin/train/twincache-train" "$work/cuda_vs_cpu"
  step "test: train_cuda_vs_cpu (--mix)" 180 "$logs/cuda_vs_cpu_mix.log" \
    sh "$here/tests/train/cuda_vs_cpu.sh" "$bin/gen/twincache-gen" "$bin/train/twincache-train" \
    "$work/cuda_vs_cpu_mix" mix
  step "test: train_cuda_vs_cpu (rows per world)" 180 "$logs/cuda_vs_cpu_rows.log" \
    sh "$here/tests/train/cuda_vs_cpu.sh" "$bin/gen/twincache-gen" "$bin/train/twincache-train" \
    "$work/cuda_vs_cpu_rows" rows
  # the CUDA backend's NCCL sums: --nccl = plain on one GPU; 2 ranks at B = 1
  # at 2B (needs 2 GPUs and an MPI launcher); 77 (not run) without NCCL
  find_nccl
  for m in one two; do
    step "test: train_nccl_equal_$m" 180 "$logs/nccl_equal_$m.log" \
      sh "$here/tests/train/nccl_equal.sh" "$m" "${MPIEXEC:-mpiexec}" "$bin/gen/twincache-gen" \
      "$bin/train/twincache-train" "$work/nccl_equal_$m"
  done
else # the CPU twins of the same programs: the emulations ctest also runs
  for t in test_expand_cuda test_gemm_cuda; do
    if [ -x "$bin/tests/train/$t" ]; then
      step "test: $t --emulate" 120 "$logs/$t.log" "$bin/tests/train/$t" --emulate
    else
      record "test: $t --emulate" 77 "$logs/$t.log" "not built (no CUDA)"
    fi
  done
fi
# the CUDA backend loaded from its plugin against the linked one (on a GPU:
# the same log and checkpoint; here: the same refusal and CPU run): the
# tree's plugin trainer, and the portable wheel's trainer and plugin when
# the bundle holds them (wheel/bin, wheel/lib/twincache)
for which in tree wheel; do
  if [ "$which" = tree ]; then
    t=$bin/train/twincache-train-cuda-dlopen plugin=$bin/train/libtwincache_cuda.so match=exact
  else # another host compiler: its log agrees to 1e-3 (cuda_dlopen.sh)
    t=$bin/wheel/bin/twincache-train plugin=$bin/wheel/lib/twincache/libtwincache_cuda.so match=close
  fi
  if [ -x "$t" ] && [ -f "$plugin" ]; then
    step "test: cuda_dlopen ($which's plugin)" 180 "$logs/cuda_dlopen_$which.log" \
      sh "$here/tests/train/cuda_dlopen.sh" "$bin/gen/twincache-gen" "$bin/train/twincache-train" "$t" \
      "$plugin" "$work/cuda_dlopen_$which" "$match"
  else
    echo "no $t or $plugin" >"$logs/cuda_dlopen_$which.log"
    record "test: cuda_dlopen ($which's plugin)" 77 "$logs/cuda_dlopen_$which.log" "not in this build"
  fi
done
# Python: the tests that need CUDA (selected by name); exit 5 (none collected) is a failure
py=""
for c in ${TWINCACHE_PYTHON:-} python3 /usr/bin/python3; do # the first with torch
  "$c" -c "import torch" >/dev/null 2>&1 && { py=$c; break; }
done
py=${py:-${TWINCACHE_PYTHON:-python3}}
lib=$(find "$bin" -maxdepth 2 -name 'libtwincache.so*' 2>/dev/null | head -n 1)
pysel="cuda" # by name: the device tests (skipped without CUDA) and the fake-CUDA ones (fake_cuda.py)
if [ "${TWINCACHE_GPU_CHECK_NO_PYTHON:-0}" = 1 ]; then # a sanitizer build's library cannot load into Python
  echo "TWINCACHE_GPU_CHECK_NO_PYTHON=1" >"$logs/python.log"
  record "test: python -k '$pysel'" 77 "$logs/python.log" "TWINCACHE_GPU_CHECK_NO_PYTHON=1"
elif [ -z "$lib" ]; then
  record "test: python -k '$pysel'" 77 "$logs/python.log" "no libtwincache.so in $bin"
elif ! "$py" -c "import torch, pytest, numpy" >/dev/null 2>&1; then
  echo "$py lacks torch, pytest or numpy" >"$logs/python.log"
  record "test: python -k '$pysel'" 77 "$logs/python.log" "$py lacks torch/pytest/numpy"
elif [ "$mode" = run ] && ! "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then
  echo "$py: torch.cuda.is_available() is False" >"$logs/python.log"
  record "test: python -k '$pysel'" 77 "$logs/python.log" "this torch has no CUDA"
else
  TWINCACHE_LIBRARY=$lib TWINCACHE_BIN_DIR=$bin TWINCACHE_GEN=$bin/gen/twincache-gen \
    TWINCACHE_INSPECT=$bin/tools/twincache-inspect TWINCACHE_TEST_TMP=$work/python-tmp \
    TWINCACHE_TEST_CACHE=$work/python-tmp/loader-cache \
    timeout 300 "$py" "$here/python/tests/run_pytest.py" "$here/python/tests" -k "$pysel" -rs \
    >"$logs/python.log" 2>&1
  rc=$?
  # on a GPU the device tests must run: a summary without "passed" is a failure
  [ "$mode" = run ] && [ "$rc" -eq 0 ] && ! tail -n 1 "$logs/python.log" | grep -q passed && rc=1
  record "test: python -k '$pysel'" "$rc" "$logs/python.log" "$(tail -n 1 "$logs/python.log")"
fi

fi # (fault)

# ---- 2. the sampler kernel against the CPU loader -----------------------------------
echo "== 2. the fresh-world sampler: bit for bit, then timed"
sample_bin=$bin/bench/bench_sample_cuda
emu=""
[ "$mode" = dry ] && emu=--emulate
mechs="linear mlp rff sigmoid poly linear:0.4,mlp:0.3,rff:0.3"
noises="gauss laplace uniform cauchy gumbel"
check_caches=""
i=0
gen_failed=0
for kind in do shift noise; do
  for mech in $mechs; do
    # every noise family under every kind; standardisation and heteroscedastic
    # noise on alternate caches
    noise=$(echo $noises | cut -d' ' -f$((i % 5 + 1)))
    extra=""
    [ $((i % 2)) -eq 1 ] && extra="--standardize"
    [ $((i % 3)) -eq 2 ] && extra="$extra --hetero 0.5"
    name="$kind-${mech%%:*}$( [ "$mech" != "${mech%%,*}" ] && echo -mixture)-$noise"
    if gen --out "$work/caches/$name" --graphs "$CHECK_GRAPHS" --samples 0 --seed $((100 + i)) \
      --nodes 2:12 --mechanism "$mech" --noise "$noise" --intervention "$kind" $extra \
      >>"$logs/gen-check.log" 2>&1; then
      check_caches="$check_caches $work/caches/$name"
    else
      echo "gen failed: $name" >>"$logs/gen-check.log"
      gen_failed=1
    fi
    i=$((i + 1))
  done
done
# what the kernel does not take, shown refused: soft worlds, several targets, iSCM
gen --out "$work/caches/soft-linear" --graphs "$CHECK_GRAPHS" --samples 0 --seed 5 --intervention soft \
  >>"$logs/gen-check.log" 2>&1 && check_caches="$check_caches $work/caches/soft-linear" || gen_failed=1
gen --out "$work/caches/do-multi-target" --graphs "$CHECK_GRAPHS" --samples 0 --seed 6 --targets-per-world 2:3 \
  >>"$logs/gen-check.log" 2>&1 && check_caches="$check_caches $work/caches/do-multi-target" || gen_failed=1
gen --out "$work/caches/do-iscm" --graphs "$CHECK_GRAPHS" --samples 0 --seed 8 --standardize --iscm \
  >>"$logs/gen-check.log" 2>&1 && check_caches="$check_caches $work/caches/do-iscm" || gen_failed=1
# independent worlds (--worlds independent, FORMAT.md 3.9): world k's noise from
# its own key, world_key(key, k + 1); every kind the kernel takes, standardised
# and heteroscedastic on some
j=0
for spec in "do|--mechanism linear --noise gauss --standardize" \
            "shift|--mechanism mlp --noise laplace --hetero 0.5" \
            "noise|--mechanism linear:0.4,rff:0.3,poly:0.3 --noise gumbel --values 0:2"; do
  kind=${spec%%|*}
  # shellcheck disable=SC2086
  gen --out "$work/caches/indep-$kind" --graphs "$CHECK_GRAPHS" --samples 0 --seed $((200 + j)) --nodes 2:12 \
    --worlds independent --intervention "$kind" ${spec#*|} >>"$logs/gen-check.log" 2>&1 &&
    check_caches="$check_caches $work/caches/indep-$kind" || gen_failed=1
  j=$((j + 1))
done
record "sampler: generate the check caches" "$gen_failed" "$logs/gen-check.log"
check_cmd="$sample_bin" # (a build without CUDA has none: the sampler's steps are then not run)
[ "$fault" = 1 ] && check_cmd=false # the failure path, on purpose
# sampler STEP-NAME LIMIT LOG ARGS...: a sampler step, or "not run" in a build without CUDA
sampler() {
  if [ -x "$sample_bin" ] || [ "$4" = false ]; then # (false: TWINCACHE_GPU_CHECK_FAULT)
    step "$@"
  else
    echo "$sample_bin not built (a build without CUDA)" >"$3"
    record "$1" 77 "$3" "not built (no CUDA)"
  fi
}
# shellcheck disable=SC2086
sampler "sampler: kernel = CPU loader, bit for bit" 240 "$logs/sample-check.log" \
  "$check_cmd" $emu --rows 64 --batch 64 --repeat 1 --cpu-graphs 0 $check_caches

train_runs="" layouts=dense nccl_runs=""
if [ "$fault" != 1 ]; then
gen --out "$work/caches/default" --graphs "$DEFAULT_GRAPHS" --samples 0 --seed 7 >>"$logs/gen-time.log" 2>&1
gen --out "$work/caches/avici" --graphs "$AVICI_GRAPHS" --samples 0 --seed 9 --nodes 20:30 --targets 3 \
  --mechanism mlp >>"$logs/gen-time.log" 2>&1
record "sampler: generate the timing caches" $? "$logs/gen-time.log"
sampler "sampler: time, default workload (S=64)" 120 "$logs/sample-time-default.log" \
  "$sample_bin" $emu --rows 64 --batch 256 --repeat "$REPEAT" "$work/caches/default"
sampler "sampler: time, AVICI scale (S=800)" 180 "$logs/sample-time-avici.log" \
  "$sample_bin" $emu --rows 800 --batch 64 --repeat "$REPEAT" "$work/caches/avici"
gen --out "$work/caches/default-indep" --graphs "$DEFAULT_GRAPHS" --samples 0 --seed 7 --worlds independent \
  >>"$logs/gen-time.log" 2>&1
record "sampler: generate the independent-worlds timing cache" $? "$logs/gen-time.log"
sampler "sampler: time, independent worlds, default workload (S=64)" 120 "$logs/sample-time-indep.log" \
  "$sample_bin" $emu --rows 64 --batch 256 --repeat "$REPEAT" "$work/caches/default-indep"

# ---- 3. the trainer and the Python loop -----------------------------------------------
echo "== 3. the trainer (device $DEVICE) and the Python loop"
train=$bin/train/twincache-train
gen --out "$work/caches/train" --graphs "$TRAIN_GRAPHS" --seed 7 >>"$logs/gen-train.log" 2>&1
record "trainer: generate the cache" $? "$logs/gen-train.log"
if [ "$mode" = run ]; then
  step "trainer: pinned memcpy (--bench-h2d)" 60 "$logs/h2d.json" \
    "$train" --cache "$work/caches/train" --batch 256 --bench-h2d --json
fi
layouts=dense
"$train" --help 2>&1 | grep -q -- '--layout' && layouts="dense compact"
train_runs=""
for layout in $layouts; do
  for t in $THREAD_SET; do
    lflag=""
    [ "$layout" = compact ] && lflag="--layout compact"
    # shellcheck disable=SC2086
    step "trainer: $layout, $t decode threads" 120 "$logs/train-$layout-$t.json" \
      "$train" --cache "$work/caches/train" --batch 256 --steps "$TRAIN_STEPS" --threads "$t" --val-split 0.1 \
      --eval-every "$TRAIN_STEPS" --device "$DEVICE" --json --quiet $lflag
    train_runs="$train_runs $layout:$t"
  done
done
# a checkpoint predicts a cache of another shape (--predict-only without
# --cache takes the cache's layout) and reads withheld do() targets back
# (host side, before the upload): the same file as with the targets given
gen --out "$work/caches/shape" --graphs 40 --nodes 12:14 --samples 24 --targets 3 --seed 11 \
  >>"$logs/gen-train.log" 2>&1
step "trainer: checkpoint for the shape checks" 120 "$logs/shape-train.log" \
  "$train" --cache "$work/caches/train" --batch 32 --steps 10 --device "$DEVICE" --quiet \
  --checkpoint "$work/shape.ck"
step "trainer: predict another N, K, S (no --cache)" 60 "$logs/shape-predict.log" \
  "$train" --predict-only --resume "$work/shape.ck" --val-cache "$work/caches/shape" --device "$DEVICE" \
  --predict "$work/shape-$DEVICE.npz"
step "trainer: the same, targets withheld" 60 "$logs/shape-withheld.log" \
  "$train" --predict-only --resume "$work/shape.ck" --val-cache "$work/caches/shape" --device "$DEVICE" \
  --val-withhold-targets --predict "$work/shape-$DEVICE-withheld.npz"
cmp "$work/shape-$DEVICE.npz" "$work/shape-$DEVICE-withheld.npz" >"$logs/shape-withheld-cmp.log" 2>&1
record "trainer: withheld do() targets read back (same file)" $? "$logs/shape-withheld-cmp.log"
# beside a training cache of another shape the CUDA backend refuses it (one
# line); the CPU one evaluates it
"$train" --cache "$work/caches/train" --val-cache "$work/caches/shape" --batch 32 --steps 2 --device "$DEVICE" \
  --quiet >"$logs/shape-refused.log" 2>&1
rc=$?
if [ "$DEVICE" = cuda ]; then
  [ "$rc" -eq 1 ] && [ "$(wc -l <"$logs/shape-refused.log")" -eq 1 ] &&
    grep -q "training shape only" "$logs/shape-refused.log"
  record "trainer: another validation shape refused on CUDA (one line)" $? "$logs/shape-refused.log"
else
  record "trainer: another validation shape evaluated on the CPU" "$rc" "$logs/shape-refused.log"
fi
# NCCL's W = 1 overhead: the same run with its sums (--nccl) and without
if [ "$mode" = run ] && find_nccl; then
  for v in plain nccl; do
    nflag=""
    [ "$v" = nccl ] && nflag="--nccl"
    # shellcheck disable=SC2086
    step "trainer: NCCL overhead, $v" 120 "$logs/train-nccl-$v.json" \
      "$train" --cache "$work/caches/train" --batch 256 --steps "$TRAIN_STEPS" --threads "$cores" --val-split 0.1 \
      --eval-every "$TRAIN_STEPS" --device cuda --json --quiet $nflag && nccl_runs="$nccl_runs $v"
  done
else
  why="needs a GPU"
  [ "$mode" = run ] && why="no libnccl.so.2 (TWINCACHE_NCCL_LIBRARY, ldconfig, python's nvidia/nccl)"
  echo "$why" >"$logs/train-nccl.log"
  record "trainer: NCCL overhead (W = 1, batch 256)" 77 "$logs/train-nccl.log" "$why"
fi
if [ "${TWINCACHE_GPU_CHECK_NO_PYTHON:-0}" != 1 ] && [ -n "$lib" ] && "$py" -c "import torch" >/dev/null 2>&1; then
  PYTHONPATH=$here/python${PYTHONPATH:+:$PYTHONPATH} TWINCACHE_LIBRARY=$lib timeout 180 "$py" "$here/bench/python_device_loop.py" --cache "$work/caches/train" \
    --device "$DEVICE" --batch 256 --threads "$(echo $THREAD_SET | awk '{print $NF}')" >"$logs/python-loop.json" 2>&1
  record "python loop: device=$DEVICE" $? "$logs/python-loop.json"
else
  echo "no libtwincache.so, no torch for $py, or TWINCACHE_GPU_CHECK_NO_PYTHON=1" >"$logs/python-loop.json"
  record "python loop: device=$DEVICE" 77 "$logs/python-loop.json" "no libtwincache.so, torch, or Python wanted"
fi

fi # (fault)

# ---- 4. the report ------------------------------------------------------------------------
t_total=$(($(date +%s) - t_start))
report=$work/report.md
{
  echo "# twincache GPU check ($([ "$mode" = dry ] && echo 'DRY RUN: CPU twins, tiny sizes' || echo run))"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); wall time: ${t_total} s"
  echo "- machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 || echo 'no nvidia-smi'); $cores CPU cores; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  echo "- build: $bin; commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "## Checks"
  echo
  echo "| check | status | log | note |"
  echo "|---|---|---|---|"
  while IFS='|' read -r n s l note; do echo "| $n | $s | $l | $note |"; done <"$status"
  echo
  echo "## Sampler: kernel vs CPU loader"
  echo
  echo "Bit for bit (\`graphs\` compared, \`differ\` must be 0), then graphs/s of the kernel"
  echo "and of one CPU decode thread making the same dense fresh worlds."
  echo
  for f in sample-check sample-time-default sample-time-avici; do
    echo "### $f"
    echo
    grep '^|' "$logs/$f.log" 2>/dev/null || echo "(no table: see logs/$f.log)"
    echo
  done
  echo "## Trainer (batch 256, $TRAIN_STEPS steps, device $DEVICE)"
  echo
  pin=$(jget pinned_memcpy_h2d_gb_per_s "$logs/h2d.json")
  echo "| layout | decode threads | graphs/s | ms/step | host wait | copy wait | H2D GB/s | pinned memcpy GB/s |"
  echo "|---|---|---|---|---|---|---|---|"
  for r in $train_runs; do
    l=${r%%:*} t=${r##*:} f=$logs/train-${r%%:*}-${r##*:}.json
    echo "| $l | $t | $(jget graphs_per_s "$f") | $(jget ms_per_step "$f") | $(jget host_wait_fraction "$f") | $(jget copy_wait_fraction "$f") | $(jget h2d_gb_per_s "$f") | ${pin:--} |"
  done
  [ "$layouts" = dense ] && echo && echo "The trainer has no --layout flag: the compact layout is timed by the Python loop only."
  echo
  echo "## NCCL overhead at W = 1 (batch 256, $TRAIN_STEPS steps; target < 5%)"
  echo
  if [ -n "$nccl_runs" ]; then
    echo "| run | ms/step | graphs/s | all-reduce share (device time) |"
    echo "|---|---|---|---|"
    for v in $nccl_runs; do
      f=$logs/train-nccl-$v.json
      echo "| $v | $(jget ms_per_step "$f") | $(jget graphs_per_s "$f") | $(jget allreduce_fraction "$f") |"
    done
    a=$(jget ms_per_step "$logs/train-nccl-plain.json") b=$(jget ms_per_step "$logs/train-nccl-nccl.json")
    [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "\nNCCL overhead per step: %+.1f%%\n", 100 * (b - a) / a }'
  else
    echo "(not run: see the checks above)"
  fi
  echo
  echo "## Python loop (twincache.Loader, device=$DEVICE)"
  echo
  echo "| layout | graphs/s | ms/batch | bytes copied/batch |"
  echo "|---|---|---|---|"
  grep '^{' "$logs/python-loop.json" 2>/dev/null | while read -r line; do
    f=$(mktemp) && echo "$line" >"$f"
    echo "| $(jget layout "$f" | tr -d '"') | $(jget graphs_per_s "$f") | $(jget ms_per_batch "$f") | $(jget copied_bytes_per_batch "$f") |"
    rm -f "$f"
  done
  echo
  echo "Raw logs: logs/ (one per check)."
} >"$report"

failed=$(grep -c '|FAIL' "$status")
ran=$(wc -l <"$status")
echo
echo "gpu-check: $ran checks, $failed failed, $(grep -c '|not run|' "$status") not run; report: $report (${t_total} s)"
[ "$failed" -eq 0 ] || exit 1
exit 0
