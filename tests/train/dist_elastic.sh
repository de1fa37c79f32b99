#!/bin/sh
# Resume at another world size keeps the global batch: 1 process at --batch 8
# trains 50 steps uninterrupted; the same job runs as 2 ranks x 4 for steps
# 1..15, resumes as 4 ranks x 2 for 16..35 (a world that grows), then as 1
# process x 8 for 36..50 (one that shrinks) (160 training graphs: epochs end at steps 20 and 40, so both changes
# of world sit inside an epoch and the runs cross both boundaries). Every
# logged value must be within 1e-5 relative of the uninterrupted run's, and
# each step's graphs the same: rank 0 logs its own batch, which is the first
# --batch graphs of the one process's batch of that step. A checkpoint that
# cannot be honoured is refused with exit 1 and one line: a world size that
# does not divide the global batch (3 ranks, global 8), and a --batch that
# changes the global batch (naming the --batch to use).
# Usage: dist_elastic.sh MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
mpiexec=$1 gen=$2 train=$3 dir=$4
here=$(dirname "$0")
rm -rf "$dir" && mkdir -p "$dir"
mpi="$mpiexec --oversubscribe --allow-run-as-root --timeout 120"
"$gen" --out "$dir/cache" --graphs 200 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
common="--cache $dir/cache --val-split 0.2 --device cpu --steps 50 --eval-every 5 --threads 1 --seed 3 --quiet"
"$train" $common --batch 8 --log "$dir/a.csv" --batch-log "$dir/a.b"
$mpi -np 2 "$train" $common --batch 4 --stop-after 15 --checkpoint "$dir/ck2" \
  --log "$dir/b2.csv" --batch-log "$dir/b2.b"
$mpi -np 4 "$train" $common --batch 2 --stop-after 20 --resume "$dir/ck2" --checkpoint "$dir/ck4" \
  --log "$dir/b4.csv" --batch-log "$dir/b4.b"
"$train" $common --batch 8 --resume "$dir/ck4" --log "$dir/b1.csv" --batch-log "$dir/b1.b"
# the interrupted job's rows, steps 1..50 in order
{ tail -n +2 "$dir/b2.csv"; tail -n +2 "$dir/b4.csv"; tail -n +2 "$dir/b1.csv"; } >"$dir/b.csv"
tail -n +2 "$dir/a.csv" | paste -d, - "$dir/b.csv" |
  awk -F, -v rows=50 -v name="dist_elastic (1 rank at 8; 2 at 4, 4 at 2, 1 at 8)" -f "$here/logs_close.awk"
# graphs: rank 0's batch (G = 4, 2, 8 graphs) opens the one process's batch
# of the same step (columns: step, epoch, seq, ids)
{ tail -n +2 "$dir/b2.b" | sed 's/$/,4/'; tail -n +2 "$dir/b4.b" | sed 's/$/,2/'
  tail -n +2 "$dir/b1.b" | sed 's/$/,8/'; } >"$dir/b.b"
tail -n +2 "$dir/a.b" | paste -d, - "$dir/b.b" | awk -F, '
  { rows++
    n = split($4, a, " "); m = split($8, b, " ")
    if ($1 != $5 || $2 != $6 || m != $9 || n != 8) { printf "FAIL: batch row %d: %s against %s\n", rows, $0, $9; bad = 1; next }
    for (i = 1; i <= m; i++) if (a[i] != b[i]) { printf "FAIL: step %s graph %d: %s against %s\n", $1, i, a[i], b[i]; bad = 1 }
    if ($2 > last) last = $2 }
  END { if (rows != 50) { print "FAIL: " rows " batch rows, want 50"; exit 1 }
        printf "dist_elastic: the same graphs every step, epochs 0..%d\n", last; exit bad }'
[ "$(tail -n 1 "$dir/a.b" | cut -d, -f2)" = 2 ] || { echo "FAIL: the run did not reach epoch 2"; exit 1; }
# refusals: exit 1, one line each
refused() { # $1: what, $2: expected text, then the command
  what=$1 want=$2; shift 2
  set +e
  "$@" >/dev/null 2>"$dir/err"
  rc=$?
  set -e
  if [ "$rc" -eq 0 ] || ! grep -q -- "$want" "$dir/err"; then
    echo "FAIL: $what: exit $rc, want non-zero and \"$want\":"; cat "$dir/err"; exit 1
  fi
  echo "$what refused: $(grep -- "$want" "$dir/err" | head -n 1)"
}
refused "3 ranks (global batch 8)" "does not divide over 3 rank(s)" \
  $mpi -np 3 "$train" $common --batch 2 --resume "$dir/ck4"
set +e
"$train" $common --batch 4 --resume "$dir/ck4" >/dev/null 2>"$dir/err"
rc=$?
set -e
if [ "$rc" -ne 1 ] || [ "$(wc -l <"$dir/err")" -ne 1 ] ||
   ! grep -q -- "^twincache-train: --batch: .*global batch of 8 .*use --batch 8 " "$dir/err"; then
  echo "FAIL: --batch 4 at 1 rank from a global batch of 8: exit $rc, want 1 and one line naming --batch 8:"
  cat "$dir/err"; exit 1
fi
echo "a changed global batch refused: $(cat "$dir/err")"
