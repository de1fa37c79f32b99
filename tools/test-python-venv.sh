#!/usr/bin/env bash
# tools/test-python-venv.sh [VENV] — the Python tests on the stack users run
# today, against the INSTALLED package: a venv (default build/venv-torch2,
# created when missing, reused when present) with numpy 2.x and torch 2.13.0
# (the CPU build) from the package index, causal-learn 0.1.4.0 and gies 0.0.3
# (the suite's reference algorithms), this checkout pip-installed into it
# (the wheel: libtwincache.so and the programs inside), then
#   1. python/tests with TWINCACHE_TEST_INSTALLED=1 (nothing from the source
#      tree on sys.path: a file missing from the wheel fails a test);
#   2. torchrun --nproc_per_node 2 examples/train_avici.py on the CPU (gloo):
#      the example's data-parallel path, a few steps; then 2 processes at
#      batch 8 against 1 at batch 16 for 50 steps: the same graphs per step
#      and losses within 1e-5 relative; the same job interrupted and resumed
#      at 2 -> 1 -> 2 processes (global batch 16) equals it too.
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
"$py" -c "import gies" 2>/dev/null || "$py" -m pip install -q "gies==0.0.3"  # GIES (BSD-3, numpy only)
echo "== venv: pip install . (the wheel of this checkout)"
"$py" -m pip install -q --force-reinstall --no-deps .
"$py" -c "import numpy, torch, twincache; print('venv:', numpy.__version__, torch.__version__, 'twincache', twincache.__version__, twincache.library_path)"
# the binding is ctypes: pip install . builds one py3-none-<platform> wheel for every CPython
"$py" - <<'PYEOF'
import importlib.metadata as md, sys
tags = [l.split(": ", 1)[1] for l in md.distribution("twincache").read_text("WHEEL").splitlines() if l.startswith("Tag: ")]
if not tags or not all(t.startswith("py3-none-") for t in tags):
    sys.exit(f"pip install . built a wheel tagged {tags}, not py3-none-<platform> (pyproject.toml wheel.py-api)")
print("wheel tag:", ", ".join(tags))
PYEOF

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
OMP_NUM_THREADS=1 "$venv/bin/torchrun" --standalone --nproc_per_node 2 \
  examples/train_avici.py --data twincache --cache "$tmp/ddp-cache" --steps 6 --batch 8 \
  --layers 1 --eval-graphs 64 --amp off >"$tmp/ddp.log" 2>&1 ||
  { cat "$tmp/ddp.log"; echo "torchrun check failed"; exit 1; }
grep -q "AUPRC" "$tmp/ddp.log" || { cat "$tmp/ddp.log"; echo "torchrun: no AUPRC line"; exit 1; }
tail -3 "$tmp/ddp.log"

# same_steps WHAT REF PART...: the --loss-log rows of PART... (one run, perhaps resumed
# in pieces) are REF's 50 steps: the same graph ids, losses within 1e-5 relative
same_steps() {
  "$py" - "$@" <<'PY'
import csv, sys
what, ref, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
a = list(csv.DictReader(open(ref)))
b = [r for f in parts for r in csv.DictReader(open(f))]
want = [str(i) for i in range(1, 51)]
assert [r["step"] for r in a] == want and [r["step"] for r in b] == want, (len(a), len(b))
worst = 0.0
for x, y in zip(a, b):
    assert x["graph_ids"] == y["graph_ids"], f"{what}: step {x['step']}: other graphs ({x['graph_ids']} | {y['graph_ids']})"
    la, lb = float(x["loss"]), float(y["loss"])
    worst = max(worst, abs(la - lb) / abs(la))
    assert abs(la - lb) <= 1e-5 * abs(la), f"{what}: step {x['step']}: loss {la} vs {lb}"
print(f"{what}: 50 steps, same graphs, largest relative loss difference {worst:.2g}")
PY
}

# 2 processes at --batch 8 are 1 process at --batch 16: the same graphs every step
# (192 training graphs: epochs end alike) and the global loss within 1e-5 relative
# (measured 1.7e-7). The learning rate is high from step 1 so that a wrong weighting
# of the ranks' gradients shows: DDP's plain mean of per-rank means is 1.4e-2 off.
echo "== torchrun 2 x batch 8 == 1 process x batch 16 (50 steps)"
small="examples/train_avici.py --data twincache --cache $tmp/ddp-cache --steps 50 --layers 1 --width 16
  --heads 2 --rows 8 --stats off --eval-graphs 64 --amp off --log-every 25 --torch-threads 1
  --lr 1e-2 --warmup 1"
OMP_NUM_THREADS=1 "$py" $small --batch 16 --loss-log "$tmp/w1.csv" >"$tmp/w1.log" 2>&1 ||
  { cat "$tmp/w1.log"; echo "1-process run failed"; exit 1; }
OMP_NUM_THREADS=1 "$venv/bin/torchrun" --standalone --nproc_per_node 2 $small --batch 8 \
  --loss-log "$tmp/w2.csv" >"$tmp/w2.log" 2>&1 || { cat "$tmp/w2.log"; echo "torchrun run failed"; exit 1; }
same_steps "torchrun equivalence (2 x 8 == 1 x 16)" "$tmp/w1.csv" "$tmp/w2.csv"
grep "all-reduce" "$tmp/w2.log"

# resume at another process count, same global batch of 16: 2 processes x 8 for
# steps 1..20, 1 x 16 for 21..35, 2 x 8 for 36..50 (epochs of 12 steps: both changes
# sit inside an epoch) read the same graphs every step as the uninterrupted 1-process
# run above, and log the same losses within 1e-5 relative
echo "== torchrun resume 2 -> 1 -> 2 processes (global batch 16) == 1 process (50 steps)"
rm -f "$tmp/el.pt"
OMP_NUM_THREADS=1 "$venv/bin/torchrun" --standalone --nproc_per_node 2 $small --batch 8 \
  --checkpoint "$tmp/el.pt" --stop-after 20 --loss-log "$tmp/el1.csv" >"$tmp/el1.log" 2>&1 ||
  { cat "$tmp/el1.log"; echo "elastic: 2-process run failed"; exit 1; }
OMP_NUM_THREADS=1 "$py" $small --batch 16 --checkpoint "$tmp/el.pt" --resume --stop-after 15 \
  --loss-log "$tmp/el2.csv" >"$tmp/el2.log" 2>&1 ||
  { cat "$tmp/el2.log"; echo "elastic: 1-process resume failed"; exit 1; }
OMP_NUM_THREADS=1 "$venv/bin/torchrun" --standalone --nproc_per_node 2 $small --batch 8 \
  --checkpoint "$tmp/el.pt" --resume --loss-log "$tmp/el3.csv" >"$tmp/el3.log" 2>&1 ||
  { cat "$tmp/el3.log"; echo "elastic: 2-process resume failed"; exit 1; }
# a per-process batch that changes the global batch is refused with one line
if OMP_NUM_THREADS=1 "$py" $small --batch 8 --checkpoint "$tmp/el.pt" --resume >"$tmp/el4.log" 2>&1 ||
   ! grep -q "global batch of 16 .*use --batch 16" "$tmp/el4.log"; then
  cat "$tmp/el4.log"; echo "elastic: --batch 8 at 1 process (global 16) was not refused"; exit 1
fi
same_steps "elastic resume 2 -> 1 -> 2" "$tmp/w1.csv" "$tmp/el1.csv" "$tmp/el2.csv" "$tmp/el3.csv"
echo "test-python-venv: passed in $(( $(date +%s) - t0 )) s"
