#!/bin/sh
# The trainer built without MPI (the portable wheel's) loads MPI at run time
# and trains data-parallel exactly as the linked build does: under the same
# mpirun, 2 ranks of each write the same log and the same checkpoint, bit for
# bit; the dlopen build is not linked to libmpi; the text names the loaded
# library; pointed at a library that is not there, 2 ranks are refused.
# Usage: dist_dlopen.sh MPIEXEC TWINCACHE_GEN TWINCACHE_TRAIN TRAIN_MPI_DLOPEN SCRATCH_DIR
set -eu
mpiexec=$1 gen=$2 linked=$3 loaded=$4 dir=$5
rm -rf "$dir" && mkdir -p "$dir"
mpi="$mpiexec --oversubscribe --allow-run-as-root --timeout 120 -np 2"
if command -v ldd >/dev/null && ldd "$loaded" | grep -q libmpi; then
  echo "FAIL: $loaded is linked to an MPI library:"; ldd "$loaded" | grep libmpi; exit 1
fi
"$gen" --out "$dir/cache" --graphs 120 --samples 16 --nodes 4:6 --seed 9 --threads 2 --quiet
common="--cache $dir/cache --val-split 0.2 --device cpu --steps 20 --eval-every 10 --threads 1 --seed 4 --batch 4"
$mpi "$linked" $common --quiet --log "$dir/linked.csv" --checkpoint "$dir/linked.ck"
$mpi "$loaded" $common --log "$dir/loaded.csv" --checkpoint "$dir/loaded.ck" >"$dir/loaded.txt"
cmp "$dir/linked.csv" "$dir/loaded.csv" || { echo "FAIL: the logs differ"; exit 1; }
cmp "$dir/linked.ck" "$dir/loaded.ck" || { echo "FAIL: the checkpoints differ"; exit 1; }
grep -q "data parallel: 2 rank(s).*loaded at run time from libmpi.so" "$dir/loaded.txt" ||
  { echo "FAIL: the text does not name the loaded MPI:"; cat "$dir/loaded.txt"; exit 1; }
echo "2 ranks: the run-time MPI trainer's log and checkpoint equal the linked one's"
if TWINCACHE_MPI_LIBRARY=/nonexistent/libmpi.so.40 $mpi "$loaded" $common --quiet \
     >"$dir/refused.txt" 2>&1; then
  echo "FAIL: 2 ranks without a loadable MPI were not refused"; exit 1
fi
grep -q "one of 2 (OMPI_COMM_WORLD_SIZE=2).*TWINCACHE_MPI_LIBRARY.*/nonexistent/libmpi.so.40" "$dir/refused.txt" ||
  { echo "FAIL: the refusal does not say why:"; cat "$dir/refused.txt"; exit 1; }
echo "2 ranks without a loadable MPI: refused"
