#!/usr/bin/env bash
# The README's main-job command, end to end on a regime that is not solved
# outright: install what is missing -> build -> build one held-out cell of
# the suite (suite/SUITE.md; default inter-do3: linear SCMs with do() on 3
# random nodes per graph, where the twin worlds show few edges) -> generate a
# training cache of the same regime with another seed -> show it -> train the
# edge model on it (CUDA when a GPU is usable, else the CPU), validating on
# the cell -> write its predictions (--predict) -> score them on the cell
# beside the baselines (chance, var-sort, R2-sort, |corr|, |T|), ending with
# one sentence on where the model stands against the cell's best baseline.
# Environment knobs: CELL (default inter-do3), GRAPHS (default 4000),
# STEPS (default 600), CACHE (default demo-cache-$CELL/), SUITE_DIR (default
# demo-suite/), SEED (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."

CELL=${CELL:-inter-do3}
GRAPHS=${GRAPHS:-4000}
STEPS=${STEPS:-600}
CACHE=${CACHE:-demo-cache-$CELL}
SUITE_DIR=${SUITE_DIR:-demo-suite}
SEED=${SEED:-1}

tools/install-deps.sh
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (build/release)"
mkdir -p build
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWINCACHE_TESTS=ON >build/release.configure.log 2>&1 ||
  { cat build/release.configure.log; exit 1; }
cmake --build build/release -j"$jobs" --target twincache twincache-gen twincache-inspect twincache-train >/dev/null
bin=build/release
suite=$bin/suite/twincache-suite

echo "== the held-out cell $CELL ($SUITE_DIR/$CELL, checked against the suite's digest)"
"$suite" build "$SUITE_DIR" --cells "$CELL" --threads "$jobs"
read -r -a regime <<<"$("$suite" args "$CELL")"

# A demo cache of an older format can be read but not extended: keep it
# aside (nothing is deleted) and generate a current one.
if [ -d "$CACHE" ] && info=$("$bin/tools/twincache-inspect" info "$CACHE" --json 2>/dev/null); then
  have=$(printf '%s\n' "$info" | sed -n 's/^  "format_version": \([0-9]*\),$/\1/p')
  want=$(printf '%s\n' "$info" | sed -n 's/^  "reader_format_version": \([0-9]*\),$/\1/p')
  if [ -n "$have" ] && [ -n "$want" ] && [ "$have" != "$want" ]; then
    aside="$CACHE.v$have"
    [ -e "$aside" ] && aside="$CACHE.v$have.$$"
    echo "run-demo: $CACHE/ has format version $have, this build writes $want: moved to $aside/"
    mv "$CACHE" "$aside"
  fi
fi
echo "== generate $GRAPHS training graphs of $CELL's regime (seed $SEED) into $CACHE/"
echo "   (${regime[*]}; rerunning resumes or finds it complete)"
status=0
"$bin/gen/twincache-gen" --out "$CACHE" --graphs "$GRAPHS" --seed "$SEED" "${regime[@]}" || status=$?
if [ "$status" = 3 ]; then
  # exit 3: built with other options (an older build's defaults): keep it aside
  aside="$CACHE.old"
  [ -e "$aside" ] && aside="$CACHE.old.$$"
  echo "run-demo: $CACHE/ was built with other options: moved to $aside/, generating anew"
  mv "$CACHE" "$aside"
  "$bin/gen/twincache-gen" --out "$CACHE" --graphs "$GRAPHS" --seed "$SEED" "${regime[@]}"
elif [ "$status" != 0 ]; then
  exit "$status"
fi

echo "== what is in the cache"
"$bin/tools/twincache-inspect" info "$CACHE"

pred="$CACHE.predictions.npz"
echo "== train ($STEPS steps on $CACHE/, validated on the held-out cell $SUITE_DIR/$CELL)"
start=$(date +%s)
"$bin/train/twincache-train" --cache "$CACHE" --steps "$STEPS" --seed "$SEED" \
  --val-cache "$SUITE_DIR/$CELL" --eval-every $((STEPS / 5)) --predict "$pred"
echo "run-demo: training took $(($(date +%s) - start)) s"

# the table's last line says where the model stands (its seconds are in it)
echo "== the cell's table: the trained model (twincache-train) beside the baselines"
"$suite" score "$SUITE_DIR" "$pred" --cells "$CELL" --name twincache-train
