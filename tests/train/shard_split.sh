#!/bin/sh
# --cache SHARD (issue 35): the train/validation split is of the graphs the
# shard holds, [first, end) of the whole cache's index, not of [0, end).
# Shard 3 of 4 of 200 graphs holds 150..199: 45/5 at the default
# --val-split 0.1, 30/20 at 0.4; every trained graph lies in [150, 180) at
# 0.4, validation reads 20 graphs, and a checkpoint resumes on the shard.
# Usage: shard_split.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH
gen=$1 train=$2 dir=$3
fail=0
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$gen" --out "$dir/set" --shard 3/4 --graphs 200 --chunk-graphs 10 --samples 8 --nodes 3:5 \
  --seed 1 --threads 1 --quiet || exit 1
shard=$dir/set/shard-00003-of-00004
common="--cache $shard --device cpu --batch 4 --threads 1"

"$train" $common --steps 3 >"$dir/text" 2>&1 || { echo "FAIL: default split: exit $?"; cat "$dir/text"; fail=1; }
if grep -q "50 graphs 150..199 (train 45, validation 5)" "$dir/text"; then
  echo "ok: --val-split 0.1 of the shard's 50 graphs: 45/5"
else
  echo "FAIL: default split on a shard:"; cat "$dir/text"; fail=1
fi

out=$("$train" $common --steps 8 --val-split 0.4 --eval-every 8 --json --batch-log "$dir/batches.csv" \
        --checkpoint "$dir/ck" 2>"$dir/text")
rc=$?
if [ $rc -ne 0 ] || ! grep -q "50 graphs 150..199 (train 30, validation 20)" "$dir/text" ||
   ! printf '%s' "$out" | grep -q '"val_graphs": 20,'; then
  echo "FAIL: --val-split 0.4 on a shard: exit $rc: $out"; cat "$dir/text"; fail=1
else
  echo "ok: --val-split 0.4 of the shard's 50 graphs: 30/20, 20 validated on"
fi
# the batch log's 4th column: each batch's graph ids; 8 steps of 4 are one
# epoch of the 30 training graphs (7 full batches and one of 2)
ids=$(tail -n +2 "$dir/batches.csv" | cut -d, -f4 | tr ' ' '\n' | sort -n | tr '\n' ' ')
want=$(seq 150 179 | tr '\n' ' ')
if [ "$ids" != "$want" ]; then
  echo "FAIL: an epoch trained on graphs $ids, not on each of 150..179 once"; fail=1
else
  echo "ok: one epoch trains on each graph of the shard's training range 150..179 once"
fi

if "$train" $common --steps 10 --val-split 0.4 --resume "$dir/ck" --quiet 2>"$dir/err"; then
  echo "ok: a shard's checkpoint resumes on the shard"
else
  echo "FAIL: resume on a shard:"; cat "$dir/err"; fail=1
fi
[ $fail -eq 0 ] && rm -rf "$dir"
exit $fail
