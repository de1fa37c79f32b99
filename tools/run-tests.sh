#!/usr/bin/env bash
# The README's test command: installs what is missing, then builds and runs
# the ctest suite in three configurations:
#   build/release  optimised (+ CUDA trainer and kernels when nvcc is found)
#   build/asan     AddressSanitizer + UndefinedBehaviorSanitizer, every test
#   build/tsan     ThreadSanitizer, the tests labelled "threaded"
# GPU tests exit 77 (skipped) on a machine without a usable GPU.
# The Python binding's tests run twice: on Debian's stack (ctest
# "python_binding": /usr/bin/python3, numpy 1.24, torch 1.13, the source tree)
# in build/release, and on today's (tools/test-python-venv.sh: a venv with
# numpy 2.x and torch 2.13.0 CPU, the package pip-installed into it, plus a
# torchrun data-parallel check). The sanitizer builds skip them (an ASan .so
# inside Python would need the runtime LD_PRELOADed).
# Then the portable wheel: tools/build-wheel.sh (zig cc, static third-party
# libraries from pinned sources) and tools/test-wheel.sh (the wheel in Debian
# minbase chroots; root only). Measured on the 2-core VM: 169-257 s +
# 137-151 s from nothing (load 4-6), ~10-90 s + ~25 s with build/wheel and
# build/wheel-test kept.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
jobs=$(nproc 2>/dev/null || echo 2)

configure_and_build() {
  local dir=$1; shift
  echo "== configure and build $dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j"$jobs"
}
mkdir -p build

configure_and_build build/release -DTWINCACHE_TESTS=ON -DTWINCACHE_PYTHON=/usr/bin/python3
echo "== tests: release"
ctest --test-dir build/release --output-on-failure -j"$jobs"
echo "== tests: python on numpy 2 / torch 2, installed package (venv)"
tools/test-python-venv.sh build/venv-torch2

echo "== portable wheel: build from pinned sources, then test it in chroots"
tools/build-wheel.sh
if [ "$(id -u)" = 0 ]; then
  tools/test-wheel.sh
else
  echo "test-wheel: skipped (debootstrap and chroot need root)"
fi

configure_and_build build/asan -DTWINCACHE_SANITIZE=address -DTWINCACHE_CUDA=OFF
echo "== tests: ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs"

configure_and_build build/tsan -DTWINCACHE_SANITIZE=thread -DTWINCACHE_CUDA=OFF
echo "== tests: TSan (threaded tests)"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -j"$jobs" -L threaded

echo "run-tests: all three configurations passed"
