#!/usr/bin/env bash
# tools/test-python-venv.sh [VENV] — the Python tests on the stack users run
# today, against the INSTALLED package: a venv (default build/venv-torch2,
# created when missing, reused when present) with numpy 2.x and torch 2.13.0
# (the CPU build) from the package index, causal-learn 0.1.4.0 (the suite's
# reference algorithms), this checkout pip-installed into it
# (the wheel: libtwincache.so and the programs inside), then
#   1. python/tests with TWINCACHE_TEST_INSTALLED=1 (nothing from the source
#      tree on sys.path: a file missing from the wheel fails a test);
#   2. torchrun --nproc_per_node 2 examples/train_avici.py on the CPU (gloo):
#      the example's data-parallel path, a few steps.
# Called by tools/run-tests.sh after the release build; runs alone as well.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/venv-torch2}
torch_spec=${TWINCACHE_TORCH:-torch==2.13.0+cpu}   # never an unpinned torch: a multi-GB CUDA build
torch_index=${TWINCACHE_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
t0=$(date +%s)

if [ ! -x "$venv/bin/python" ]; then
  echo "== venv: creating $venv"
  /usr/bin/python3 -m venv "$venv"
fi
py="$venv/bin/python"
if ! "$py" - <<'PY' 2>/dev/null
import sys, numpy, torch, pytest
sys.exit(not (numpy.__version__.startswith("2.") and torch.__version__.startswith("2.13.0")))
PY
then
  echo "== venv: installing numpy 2.x, $torch_spec, pytest"
  "$py" -m pip install -q "numpy>=2,<3" pytest
  # the +cpu build is not on PyPI: a local wheel (find-links) first, else its own index
  "$py" -m pip install -q --only-binary=:all: "$torch_spec" 2>/dev/null ||
    "$py" -m pip install -q --only-binary=:all: --extra-index-url "$torch_index" "$torch_spec"
fi
# the suite's reference algorithms (PC, GES; python/tests/test_suite.py), pinned;
# never a dependency of the package
"$py" -c "import causallearn" 2>/dev/null || "$py" -m pip install -q "causal-learn==0.1.4.0"
echo "== venv: pip install . (the wheel of this checkout)"
"$py" -m pip install -q --force-reinstall --no-deps .
"$py" -c "import numpy, torch, twincache; print('venv:', numpy.__version__, torch.__version__, 'twincache', twincache.__version__, twincache.library_path)"

echo "== tests: python (installed package, $venv)"
tmp=build/test-tmp-venv
rm -rf "$tmp"  # caches of an earlier build (another format) must not leak into this run
TWINCACHE_TEST_INSTALLED=1 \
  TWINCACHE_TEST_TMP="$PWD/$tmp/python" TWINCACHE_TEST_CACHE="$PWD/$tmp/loader-cache" \
  TWINCACHE_ORDER_DUMP="$PWD/build/release/twincache_order_dump" \
  "$py" python/tests/run_pytest.py python/tests  # exit 77 (a module missing) is a failure here

echo "== torchrun --nproc_per_node 2 (gloo, CPU) examples/train_avici.py"
rm -rf "$tmp/ddp-cache"
"$venv/bin/twincache-gen" --out "$tmp/ddp-cache" --graphs 256 --nodes 5:8 --samples 16 --seed 4 \
  --threads 2 --quiet
OMP_NUM_THREADS=1 "$venv/bin/torchrun" --nproc_per_node 2 --master_port 29511 \
  examples/train_avici.py --data twincache --cache "$tmp/ddp-cache" --steps 6 --batch 8 \
  --layers 1 --eval-graphs 64 --amp off >"$tmp/ddp.log" 2>&1 ||
  { cat "$tmp/ddp.log"; echo "torchrun check failed"; exit 1; }
grep -q "AUPRC" "$tmp/ddp.log" || { cat "$tmp/ddp.log"; echo "torchrun: no AUPRC line"; exit 1; }
tail -2 "$tmp/ddp.log"
echo "test-python-venv: passed in $(( $(date +%s) - t0 )) s"
