#!/bin/sh
# --mix (issue 37): training on a mixture of whole caches (twin and
# independent worlds here): every batch holds the weights' shares of each
# source (batch 8 at weights 1 and 3: 2 and 6), ids are source:index below
# each source's count, a stopped and resumed run logs the same losses and
# batches as an uninterrupted one, caches of another S mix (padded to the
# larger), and bad uses are refused with one line.
# Usage: mix.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH
gen=$1
train=$2
dir=$3
fail=0
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$gen" --out "$dir/twin" --graphs 40 --seed 1 --nodes 3:6 --samples 16 --quiet || exit 1
"$gen" --out "$dir/indep" --graphs 30 --seed 2 --nodes 4:7 --samples 16 --worlds independent --quiet || exit 1
"$gen" --out "$dir/other-s" --graphs 10 --seed 3 --nodes 3:6 --samples 8 --quiet || exit 1
mix="$dir/twin=1,$dir/indep=3"

if ! "$train" --mix "$mix" --steps 12 --batch 8 --device cpu --log "$dir/full.csv" \
       --batch-log "$dir/full.batches" >"$dir/text" 2>&1; then
  echo "FAIL: --mix run"; cat "$dir/text"; fail=1
fi
if ! grep -q "^mixture of 2 caches, 70 graphs, each batch of 8: $dir/twin (weight 1: 2), $dir/indep (weight 3: 6);" \
       "$dir/text" || ! grep -q "^worlds: independent in some sources" "$dir/text"; then
  echo "FAIL: the plan does not name the mixture:"; cat "$dir/text"; fail=1
else
  echo "ok: the plan names both sources, their shares and the independent worlds"
fi
# every batch: 2 ids of source 0 (< 40) first, then 6 of source 1 (< 30)
bad=$(awk -F, 'NR > 1 { n = split($4, id, " "); if (n != 8) { print "row " NR ": " n " ids"; next }
         for (i = 1; i <= n; i++) { split(id[i], p, ":"); want = i <= 2 ? 0 : 1; lim = want ? 30 : 40
           if (p[1] != want || p[2] < 0 || p[2] >= lim) print "row " NR ": " id[i] } }' "$dir/full.batches")
rows=$(($(wc -l <"$dir/full.batches") - 1))
if [ -n "$bad" ] || [ "$rows" -ne 12 ]; then
  echo "FAIL: batch ids ($rows rows): $bad"; fail=1
else
  echo "ok: 12 batches of 2 twin and 6 independent graphs, ids source:index in range"
fi

# stop after 5 steps, resume to 12: the same rows as the uninterrupted run
"$train" --mix "$mix" --steps 12 --batch 8 --device cpu --stop-after 5 --checkpoint "$dir/ckpt" \
  --log "$dir/a.csv" --batch-log "$dir/a.batches" --quiet &&
"$train" --mix "$mix" --steps 12 --batch 8 --device cpu --resume "$dir/ckpt" \
  --log "$dir/b.csv" --batch-log "$dir/b.batches" --quiet || { echo "FAIL: stop/resume runs"; fail=1; }
if ! { cat "$dir/a.csv"; tail -n +2 "$dir/b.csv"; } | cmp -s - "$dir/full.csv" ||
   ! { cat "$dir/a.batches"; tail -n +2 "$dir/b.batches"; } | cmp -s - "$dir/full.batches"; then
  echo "FAIL: a resumed mixture differs from the uninterrupted run"; fail=1
else
  echo "ok: stopped at 5 and resumed, the losses and batches equal the uninterrupted run's"
fi

# stored sources of another S (16 and 8): the slab's S is the larger, the
# smaller source's rows padded (the features read the rows per world), on
# the CPU whatever the machine (the CUDA backend's compact batches pad no
# rows: --device auto says so first, --device cuda is refused)
if "$train" --mix "$dir/twin,$dir/other-s" --steps 4 --batch 8 --log "$dir/s.csv" >"$dir/s.text" 2>&1 &&
   grep -q "^device: cpu (--mix: caches of S = 16 (.*twin) and S = 8 (.*other-s): the CUDA backend" "$dir/s.text" &&
   grep -q "; N=[0-9]* K=[0-9]* S=16 (the largest)," "$dir/s.text" &&
   [ "$(awk -F, 'NR > 1 && $2 + 0 > 0' "$dir/s.csv" | wc -l)" -eq 4 ]; then
  echo "ok: caches of S = 16 and 8 mix at S = 16, 4 steps with a positive loss"
else
  echo "FAIL: caches of another S do not mix:"; cat "$dir/s.text"; fail=1
fi

. "$(dirname "$0")/refused.sh"
bad_flags() { want=$1 words=$2; shift 2; refused "$want" "$words" "$train" --steps 2 --device cpu "$@"; }
bad_flags 2 "--mix: one cache" --mix "$dir/twin=2"
bad_flags 2 "--mix: cache 2 (.*indep): weight '0' is not a number" --mix "$dir/twin,$dir/indep=0"
bad_flags 2 "--mix: cache 2 has an empty path" --mix "$dir/twin,=1"
bad_flags 2 "--mix: not with --cache" --mix "$mix" --cache "$dir/twin"
bad_flags 2 "--val-split: not with --mix" --mix "$mix" --val-split 0.2
bad_flags 1 "--mix: cache 2: cannot open cache" --mix "$dir/twin,$dir/missing"
bad_flags 1 "--device cuda: --mix: caches of S = 16 (.*) and S = 8 (.*other-s)" --mix "$dir/twin,$dir/other-s" \
  --device cuda
[ $fail -eq 0 ] && rm -rf "$dir"
exit $fail
