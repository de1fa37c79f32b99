#!/bin/sh
# --val-cache (issue 19): validation on every graph of a second cache, all of
# --cache trained on; a second cache of another S validates on the CPU (the
# model scores each pair alone, issue 37); an SCM-only second cache without
# --fresh-rows, --val-split beside it and a missing cache are refused with one
# line naming the flag.
# Usage: val_cache.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH
gen=$1
train=$2
dir=$3
fail=0
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$gen" --out "$dir/train" --graphs 120 --seed 1 --nodes 3:6 --samples 16 --quiet || exit 1
"$gen" --out "$dir/val" --graphs 37 --seed 2 --nodes 3:6 --samples 16 --graph ba --quiet || exit 1
"$gen" --out "$dir/other-s" --graphs 10 --seed 2 --nodes 3:6 --samples 8 --quiet || exit 1
"$gen" --out "$dir/scm-only" --graphs 10 --seed 2 --nodes 3:6 --samples 0 --quiet || exit 1

out=$("$train" --cache "$dir/train" --val-cache "$dir/val" --steps 6 --eval-every 3 --batch 8 \
        --device cpu --json 2>"$dir/text")
rc=$?
if [ $rc -ne 0 ] || ! printf '%s' "$out" | grep -q '"val_graphs": 37,' ||
   printf '%s' "$out" | grep -q '"val_auprc": null' ||
   ! grep -q "train 120, validation 0" "$dir/text" || ! grep -q "validation cache $dir/val: 37 graphs" "$dir/text"; then
  echo "FAIL: --val-cache run: exit $rc: $out"; cat "$dir/text"; fail=1
else
  echo "ok: --val-cache validates on all 37 graphs of the second cache, trains on all 120"
fi

# the final validation line is followed by what its numbers are and why the
# suite's numbers for the same cell are others (issue 37)
if ! grep -A2 "^final validation" "$dir/text" | grep -q "|T| baseline: pair (i, j) scored by |T_ij|" ||
   ! grep -A2 "^final validation" "$dir/text" | grep -q "twincache-suite score gives other numbers"; then
  echo "FAIL: no legend under the final validation line:"; cat "$dir/text"; fail=1
else
  echo "ok: the final validation line has its legend and says why the suite's numbers differ"
fi

. "$(dirname "$0")/refused.sh"
bad_flags() { want=$1 words=$2; shift 2; refused "$want" "$words" "$train" --cache "$dir/train" --steps 2 --device cpu "$@"; }
out=$("$train" --cache "$dir/train" --val-cache "$dir/other-s" --steps 2 --eval-every 2 --batch 8 \
        --device cpu --json 2>/dev/null)
if [ $? -ne 0 ] || ! printf '%s' "$out" | grep -q '"val_graphs": 10,'; then
  echo "FAIL: a validation cache of S=8 beside a training cache of S=16: $out"; fail=1
else
  echo "ok: a validation cache of another S validates on the CPU"
fi
bad_flags 1 "--val-cache: cache .*scm-only stores SCMs only" --val-cache "$dir/scm-only"
bad_flags 2 "--val-split: not with --val-cache" --val-cache "$dir/val" --val-split 0.2
bad_flags 1 "--val-cache: cannot open cache" --val-cache "$dir/missing"
[ $fail -eq 0 ] && rm -rf "$dir"
exit $fail
