#!/bin/sh
# --local-nodes (local mode, issue 29) on one process: --local-nodes 1 reads a
# set of 4 shards as node 0 of 1 (every shard), validates on --val-cache, and
# a checkpoint taken after 10 steps resumes to the same logged values as the
# uninterrupted 20 steps; the epoch's last step is a full batch (padded); refused with one line naming the flag: without
# --val-cache, M not dividing the ranks, a node directory lacking a shard.
# (More nodes need one directory path per node, i.e. more machines.)
# Usage: local.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH
set -eu
gen=$1 train=$2 dir=$3
here=$(dirname "$0")
rm -rf "$dir" && mkdir -p "$dir"
for i in 0 1 2 3; do
  "$gen" --out "$dir/set" --graphs 120 --chunk-graphs 8 --seed 1 --nodes 3:6 --samples 16 --shard $i/4 --quiet
done
"$gen" --out "$dir/val" --graphs 24 --seed 2 --nodes 3:6 --samples 16 --quiet
common="--cache $dir/set --local-nodes 1 --val-cache $dir/val --device cpu --batch 8 --steps 20 --eval-every 5
        --threads 1 --seed 3 --quiet"
"$train" $common --log "$dir/a.csv"
"$train" $common --stop-after 10 --checkpoint "$dir/ck" --log "$dir/b1.csv"
"$train" $common --resume "$dir/ck" --log "$dir/b2.csv"
tail -n 10 "$dir/a.csv" >"$dir/a.rows"
tail -n +2 "$dir/b2.csv" | paste -d, "$dir/a.rows" - |
  awk -F, -v rows=10 -v name="local mode: resumed at step 10 against uninterrupted" -f "$here/logs_close.awk"

# every step a full batch: 120 graphs at --batch 7 make 18 steps an epoch,
# the last one padded to 7 (the non-local stream's last batch holds 1 graph)
"$train" $common --batch 7 --steps 18 --batch-log "$dir/batches.csv"
last=$(awk -F, '$1 == 18 { print split($4, ids, " ") }' "$dir/batches.csv")
[ "$last" = 7 ] || { echo "FAIL: step 18 trained on $last graphs, want a full batch of 7"; exit 1; }
echo "ok: the epoch's last step is a full (padded) batch"

. "$here/refused.sh"
fail=0
bad_flags() { want=$1 words=$2; shift 2; refused "$want" "$words" "$train" --cache "$dir/set" --device cpu --steps 2 "$@"; }
bad_flags 2 "local-nodes: needs --val-cache" --local-nodes 1
bad_flags 1 "local-nodes 2 must divide the 1 rank" --local-nodes 2 --val-cache "$dir/val"
mv "$dir/set/shard-00002-of-00004" "$dir/away"
bad_flags 1 "shard 2 of 4 (graphs 56..87) is missing" --local-nodes 1 --val-cache "$dir/val"
exit $fail
