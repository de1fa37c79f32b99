#!/bin/sh
# The checkpoint carries the train loader's whole state, and resume from it
# is exact on the CPU backend across an epoch boundary: run A trains 40
# steps straight (144 train graphs / batch 8 = 18 batches per epoch, so
# epochs 0, 1 and 2); run B stops after 19 steps (mid-epoch 1); run C
# resumes B's checkpoint for steps 20..40. Each run uses another decode
# thread count. Then
#  - the batches (epoch, seq, graph ids, --batch-log) of B then C equal A's;
#  - C's final checkpoint equals A's byte for byte (parameters, AdamW
#    moments, step, loader state) and the metric rows of B then C equal A's;
#  - no FILE.tmp is left beside a checkpoint;
#  - a damaged checkpoint (a flipped byte in the loader state, a truncated
#    file, an empty file, a version-1 header) and a checkpoint whose loader
#    state is of another cache with the same graph count are each refused
#    with exit 1 and ONE stderr line naming the checkpoint.
# Usage: resume_state.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
gen=$1 train=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
"$gen" --out "$dir/cache" --graphs 160 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--cache $dir/cache --device cpu --batch 8 --steps 40 --val-split 0.1 --seed 3 --warmup 4 --quiet"
"$train" $common --threads 2 --checkpoint "$dir/a.ck" --log "$dir/a.csv" --batch-log "$dir/a.ids"
"$train" $common --threads 1 --checkpoint "$dir/b.ck" --stop-after 19 --log "$dir/b.csv" \
  --batch-log "$dir/b.ids"
cp "$dir/b.ck" "$dir/b19.ck" # C's checkpoints overwrite b.ck; keep the step-19 one
"$train" $common --threads 3 --resume "$dir/b.ck" --checkpoint "$dir/c.ck" --log "$dir/c.csv" \
  --batch-log "$dir/c.ids"

# the batches: 40 rows, epochs 0..2, B's 19 then C's 21 equal A's 40
rows() { tail -n +2 "$1"; }
[ "$(rows "$dir/a.ids" | wc -l)" -eq 40 ] || fail "a.ids has $(rows "$dir/a.ids" | wc -l) rows, want 40"
[ "$(rows "$dir/b.ids" | wc -l)" -eq 19 ] || fail "b.ids has $(rows "$dir/b.ids" | wc -l) rows, want 19"
[ "$(rows "$dir/a.ids" | cut -d, -f2 | sort -u | tr '\n' ' ')" = "0 1 2 " ] ||
  fail "run A does not span epochs 0..2"
{ rows "$dir/b.ids"; rows "$dir/c.ids"; } >"$dir/bc.ids"
if ! rows "$dir/a.ids" | cmp -s - "$dir/bc.ids"; then
  rows "$dir/a.ids" | diff - "$dir/bc.ids" | head -n 6
  fail "the batches of the interrupted + resumed runs differ from the uninterrupted run's"
fi
# the model: final checkpoints and the metric rows
cmp "$dir/a.ck" "$dir/c.ck" || fail "final checkpoint of the resumed run differs from run A's"
{ rows "$dir/b.csv"; rows "$dir/c.csv"; } >"$dir/bc.csv"
rows "$dir/a.csv" | cmp -s - "$dir/bc.csv" || fail "metric rows differ after resume"
echo "resume: 40 batches (epochs 0..2) and the final checkpoint ($(wc -c <"$dir/a.ck") bytes) identical"
for f in "$dir"/*.tmp; do
  [ -e "$f" ] && fail "temporary file left behind: $f"
done

# refusals: exit 1, one stderr line naming the checkpoint
refused() { # WHAT CHECKPOINT PATTERN [CACHE]
  cache=${4:-$dir/cache}
  set +e
  err=$("$train" --cache "$cache" --device cpu --batch 8 --steps 40 --val-split 0.1 --seed 3 \
    --warmup 4 --quiet --resume "$2" 2>&1 >/dev/null)
  rc=$?
  set -e
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q -- "$2" ||
     ! printf '%s' "$err" | grep -q -- "$3"; then
    fail "$1: exit $rc (want 1, one line naming $2 and '$3'): $err"
  fi
  echo "$1 refused: $err"
}
size=$(wc -c <"$dir/b19.ck")
cp "$dir/b19.ck" "$dir/flip.ck" # byte 56: the loader state's next_seq
printf '\001' | dd of="$dir/flip.ck" bs=1 seek=56 conv=notrunc 2>/dev/null
refused "flipped loader-state byte" "$dir/flip.ck" "checksum"
head -c $((size - 100)) "$dir/b19.ck" >"$dir/short.ck"
refused "truncated checkpoint" "$dir/short.ck" "truncated"
: >"$dir/empty.ck"
refused "empty checkpoint" "$dir/empty.ck" "not a twincache-train checkpoint"
cp "$dir/b19.ck" "$dir/v1.ck" # byte 8: the file's version
printf '\001' | dd of="$dir/v1.ck" bs=1 seek=8 conv=notrunc 2>/dev/null
refused "version-1 checkpoint" "$dir/v1.ck" "version 1"
# same size, same options, another cache: the loader state's cache tag differs
"$gen" --out "$dir/other" --graphs 160 --samples 16 --nodes 4:7 --seed 6 --threads 2 --quiet
refused "checkpoint of another cache" "$dir/b19.ck" "cache_tag" "$dir/other"
rm -rf "$dir"
