#!/bin/sh
# Ranks agree before they train (issue 35): a 2-rank job whose rank 1 has
# another --steps (which hung in MPI_Allreduce), --batch, --lr or --cache
# ends non-zero with one line naming the flag and both values, printed once;
# no hang (mpirun --timeout bounds it: a hang fails the test, not a sleep).
# Rank 1 gets its extra flags through a wrapper that reads Open MPI's rank.
# Usage: dist_agree.sh MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
mpiexec=$1 gen=$2 train=$3 dir=$4
fail=0
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$gen" --out "$dir/c" --graphs 60 --samples 8 --nodes 3:5 --seed 1 --threads 1 --quiet || exit 1
"$gen" --out "$dir/c2" --graphs 60 --samples 8 --nodes 3:5 --seed 2 --threads 1 --quiet || exit 1
cat >"$dir/rank.sh" <<EOF
#!/bin/sh
# rank 1 appends \$EXTRA1 to its command line
r=\${OMPI_COMM_WORLD_RANK:-\${PMIX_RANK:-\${PMI_RANK:-0}}}
if [ "\$r" = 1 ]; then exec "$train" "\$@" \$EXTRA1; fi
exec "$train" "\$@"
EOF
chmod +x "$dir/rank.sh"
mpi="$mpiexec --oversubscribe --allow-run-as-root --timeout 60"
common="--cache $dir/c --device cpu --steps 4 --batch 4 --threads 1 --quiet"

EXTRA1="" $mpi -x EXTRA1 -np 2 "$dir/rank.sh" $common >"$dir/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: agreeing ranks: exit $rc"; cat "$dir/out"; fail=1; else echo "ok: agreeing ranks train"; fi

disagree() { # disagree EXTRA WANT
  EXTRA1=$1 $mpi -x EXTRA1 -np 2 "$dir/rank.sh" $common >"$dir/out" 2>&1
  rc=$?
  n=$(grep -c "^twincache-train: " "$dir/out")
  if [ $rc -eq 0 ] || [ "$n" -ne 1 ] || ! grep -q "^twincache-train: rank 1 disagrees with rank 0 on $2" "$dir/out"; then
    echo "FAIL: rank 1 with '$1': exit $rc, $n lines of ours:"; cat "$dir/out"; fail=1
  else
    echo "ok: rank 1 with '$1' -> $(grep '^twincache-train: ' "$dir/out")"
  fi
}
disagree "--steps 5" "--steps: 5 here, 4 on rank 0"
disagree "--batch 3" "--batch: 3 here, 4 on rank 0"
disagree "--lr 0.01" "--lr: 0.01 here, 0.003 on rank 0"
disagree "--cache $dir/c2" "--cache (its generator seed): 2 here, 1 on rank 0"
[ $fail -eq 0 ] && rm -rf "$dir"
exit $fail
