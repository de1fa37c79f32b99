#!/bin/sh
# --fresh-rows: training on fresh worlds of the stored SCMs.
#  - on a cache with samples, the fresh run's first training loss differs
#    from the stored run's (other worlds), and --fresh-rows equal to the
#    stored S validates on the stored worlds (the same validation rows);
#  - an SCM-only cache (--samples 0) is refused without --fresh-rows (exit
#    1, one line saying what to do) and trains with it;
#  - resume is exact with fresh worlds (steps 7..12 of a resumed run equal
#    the uninterrupted run's), and a changed --fresh-rows or
#    --resample-every is refused on resume (exit 1, naming them);
#  - --resample-every without --fresh-rows is a usage error (exit 2).
# Usage: fresh.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
gen=$1 train=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
"$gen" --out "$dir/cache" --graphs 160 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
"$gen" --out "$dir/scm" --graphs 160 --samples 0 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--device cpu --batch 8 --steps 12 --eval-every 3 --threads 2 --seed 3 --warmup 2"
fail() { echo "FAIL: $*"; exit 1; }
second_row() { sed -n 2p "$1" | cut -d, -f2; }   # step 1's train_loss

"$train" --cache "$dir/cache" $common --quiet --log "$dir/stored.csv"
out=$("$train" --cache "$dir/cache" $common --fresh-rows 16 --log "$dir/fresh.csv" 2>&1)
printf '%s\n' "$out" | grep -q "^worlds: fresh, 16 rows each, drawn anew every 1 epoch(s) .*validation on the stored worlds" ||
  fail "no worlds line naming stored validation: $out"
[ "$(second_row "$dir/stored.csv")" != "$(second_row "$dir/fresh.csv")" ] ||
  fail "fresh and stored worlds gave the same first loss $(second_row "$dir/fresh.csv")"
echo "first loss: stored $(second_row "$dir/stored.csv"), fresh $(second_row "$dir/fresh.csv")"

set +e
err=$("$train" --cache "$dir/scm" $common --quiet 2>&1 >/dev/null)
rc=$?
set -e
[ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
  printf '%s\n' "$err" | grep -q "stores SCMs only.*--fresh-rows" ||
  fail "SCM-only cache without --fresh-rows: exit $rc: $err"
echo "SCM-only without --fresh-rows refused: $err"
out=$("$train" --cache "$dir/scm" $common --fresh-rows 12 --log "$dir/scm.csv" 2>&1) ||
  fail "SCM-only cache with --fresh-rows: $out"
printf '%s\n' "$out" | grep -q "validation on fresh worlds" || fail "no fresh validation line: $out"
auprc=$(tail -n 1 "$dir/scm.csv" | cut -d, -f6)
[ -n "$auprc" ] || fail "no validation AUPRC on the last row: $(tail -n 1 "$dir/scm.csv")"
echo "SCM-only cache trained on fresh worlds: final validation AUPRC $auprc"

fr="--cache $dir/cache $common --fresh-rows 16 --resample-every 2 --quiet"
"$train" $fr --log "$dir/a.csv"
"$train" $fr --checkpoint "$dir/ck" --stop-after 6 --log "$dir/b.csv"
"$train" $fr --resume "$dir/ck" --log "$dir/c.csv"
tail -n +2 "$dir/a.csv" | tail -n 6 >"$dir/a_last"
tail -n +2 "$dir/c.csv" >"$dir/c_rows"
cmp -s "$dir/a_last" "$dir/c_rows" || { diff "$dir/a_last" "$dir/c_rows" || true; fail "resumed fresh steps 7..12 differ"; }
echo "fresh resume: steps 7..12 bit-identical"
for change in "--fresh-rows 8 --resample-every 2" "--fresh-rows 16" "--resample-every 1"; do
  set +e
  # shellcheck disable=SC2086
  err=$("$train" --cache "$dir/cache" $common --quiet $change --resume "$dir/ck" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq 1 ] && printf '%s\n' "$err" | grep -q -- "--fresh-rows/--resample-every: checkpoint" ||
    fail "resume with $change: exit $rc: $err"
done
echo "changed worlds on resume refused: $err"
set +e
err=$("$train" --cache "$dir/cache" $common --resample-every 2 2>&1 >/dev/null)
rc=$?
set -e
[ "$rc" -eq 2 ] && printf '%s\n' "$err" | grep -q -- "--resample-every: needs --fresh-rows" ||
  fail "--resample-every alone: exit $rc: $err"
echo "fresh: ok"
