#!/bin/sh
# Resume is exact on the CPU backend: run A trains 12 steps uninterrupted;
# run B stops after 6 steps (--stop-after, checkpoint written); run C resumes
# from B's checkpoint. C's rows (loss, lr, validation metrics) for steps 7..12
# must equal A's byte for byte, and B's rows 1..6 A's. A damaged checkpoint
# is refused with exit 1. The compute thread count differs between the runs.
# Options that fix the batch stream cannot change on resume: a different
# --batch is refused (exit 1, one line naming --batch); the schedule may: a
# different --lr is accepted and printed in the resume line.
# Usage: resume.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
gen=$1 train=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
"$gen" --out "$dir/cache" --graphs 160 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--cache $dir/cache --device cpu --batch 8 --steps 12 --eval-every 3 --threads 2 --seed 3 --warmup 2 --quiet"
"$train" $common --log "$dir/a.csv"
"$train" $common --cpu-threads 2 --checkpoint "$dir/ck" --stop-after 6 --log "$dir/b.csv"
# also a different compute thread count: results must not depend on it
"$train" $common --cpu-threads 1 --resume "$dir/ck" --log "$dir/c.csv"
tail -n +2 "$dir/a.csv" | head -n 6 >"$dir/a_first"
tail -n +2 "$dir/a.csv" | tail -n 6 >"$dir/a_last"
tail -n +2 "$dir/b.csv" >"$dir/b_rows"
tail -n +2 "$dir/c.csv" >"$dir/c_rows"
if ! cmp -s "$dir/a_first" "$dir/b_rows"; then
  echo "FAIL: steps 1..6 differ between the uninterrupted and the interrupted run"
  diff "$dir/a_first" "$dir/b_rows" || true
  exit 1
fi
if ! cmp -s "$dir/a_last" "$dir/c_rows"; then
  echo "FAIL: resumed steps 7..12 differ from the uninterrupted run"
  diff "$dir/a_last" "$dir/c_rows" || true
  exit 1
fi
echo "resume: steps 7..12 bit-identical:"
cat "$dir/c_rows"
# a damaged checkpoint: one flipped byte in the middle -> exit 1, one line
size=$(wc -c <"$dir/ck")
cp "$dir/ck" "$dir/ck.bad"
printf '\377' | dd of="$dir/ck.bad" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
set +e
err=$("$train" $common --resume "$dir/ck.bad" 2>&1 >/dev/null)
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
  echo "FAIL: damaged checkpoint gave exit $rc: $err"
  exit 1
fi
echo "damaged checkpoint refused: $err"
# what may change on resume, and what may not
loud="--cache $dir/cache --device cpu --steps 12 --eval-every 3 --threads 2 --seed 3 --warmup 2"
set +e
out=$("$train" $loud --batch 8 --resume "$dir/ck" --lr 0.01 2>&1)
rc=$?
set -e
if [ "$rc" -ne 0 ] || ! printf '%s\n' "$out" | grep -q -- "^resume: .*--lr 0.01 "; then
  echo "FAIL: resume with a changed --lr gave exit $rc, or no resume line naming it: $out"
  exit 1
fi
echo "changed --lr accepted: $(printf '%s\n' "$out" | grep '^resume: ')"
for change in "--batch 16:--batch" "--seed 4:--seed" "--val-split 0.2:--val-split"; do
  flags=${change%%:*} name=${change##*:}
  base="--batch 8 --seed 3 --val-split 0.1"
  case $name in
    --batch) base="--seed 3 --val-split 0.1" ;;
    --seed) base="--batch 8 --val-split 0.1" ;;
    --val-split) base="--batch 8 --seed 3" ;;
  esac
  set +e
  err=$("$train" --cache "$dir/cache" --device cpu --steps 12 --quiet $base $flags --resume "$dir/ck" 2>&1 >/dev/null)
  rc=$?
  set -e
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q -- "^twincache-train: $name: "; then
    echo "FAIL: resume with $flags gave exit $rc (want 1, one line naming $name): $err"
    exit 1
  fi
  echo "changed $name refused: $err"
done
rm -rf "$dir"
