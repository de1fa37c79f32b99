#!/usr/bin/env bash
# The README's main-job command, end to end on a small default:
#   install what is missing -> build -> generate a cache of random causal
#   graphs with twin-world samples -> show it -> train the edge model on it
#   (CUDA when a GPU is usable, else the CPU) -> print the learning curve and
#   the final metrics against the |T| baseline.
# Environment knobs: GRAPHS (default 20000), STEPS (default 1500), CACHE
# (default demo-cache/), SEED (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."

GRAPHS=${GRAPHS:-20000}
STEPS=${STEPS:-1500}
CACHE=${CACHE:-demo-cache}
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
cmake --build build/release -j"$jobs" --target twincache-gen twincache-inspect twincache-train >/dev/null
bin=build/release

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
echo "== generate $GRAPHS graphs into $CACHE/ (rerunning resumes or finds it complete)"
status=0
"$bin/gen/twincache-gen" --out "$CACHE" --graphs "$GRAPHS" --seed "$SEED" || status=$?
if [ "$status" = 3 ]; then
  # exit 3: built with other options (an older build's defaults): keep it aside
  aside="$CACHE.old"
  [ -e "$aside" ] && aside="$CACHE.old.$$"
  echo "run-demo: $CACHE/ was built with other options: moved to $aside/, generating anew"
  mv "$CACHE" "$aside"
  "$bin/gen/twincache-gen" --out "$CACHE" --graphs "$GRAPHS" --seed "$SEED"
elif [ "$status" != 0 ]; then
  exit "$status"
fi

echo "== what is in the cache"
"$bin/tools/twincache-inspect" info "$CACHE"

echo "== train ($STEPS steps, 10% of the cache held out for validation)"
"$bin/train/twincache-train" --cache "$CACHE" --steps "$STEPS" --seed "$SEED" \
  --val-split 0.1 --eval-every $((STEPS / 5))
