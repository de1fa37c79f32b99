#!/bin/sh
# The Slurm scripts of examples/slurm run under simulated Slurm (issue 35):
# PATH shims stand in for sbatch, srun and scontrol and record what they are
# asked to run; twincache-gen is the real one on a tiny cache (its --graphs
# cut to 64 in chunks of 8, the rest of gen.sbatch's arguments as written).
#   submit.sh       two sbatch calls: the array, then training afterok:<array>
#   gen.sbatch      8 array tasks write the set's 8 shards (SLURM_ARRAY_*)
#   stage-local.sh  node k of 2 copies shards k, k+2, ... (SLURM_NODEID/NNODES);
#                   a wrong set path is refused with one line, non-zero
#   train.sbatch    srun's command: train_avici.py with flags it defines,
#                   MASTER_ADDR the first node, MASTER_PORT, OMP_NUM_THREADS
# Usage: slurm_scripts.sh SOURCE_DIR TWINCACHE_GEN SCRATCH
src=$1 gen=$2 dir=$3
fail=0
rm -rf "$dir" && mkdir -p "$dir/bin" || exit 1
log=$dir/calls
# shims: one line per call, "name<TAB>args" (and srun's environment)
cat >"$dir/bin/sbatch" <<SHIM
#!/bin/sh
echo "sbatch	\$*" >>"$log"
echo 4242
SHIM
cat >"$dir/bin/srun" <<SHIM
#!/bin/sh
echo "srun	\$*" >>"$log"
echo "srun-env	MASTER_ADDR=\$MASTER_ADDR MASTER_PORT=\$MASTER_PORT OMP_NUM_THREADS=\$OMP_NUM_THREADS" >>"$log"
SHIM
cat >"$dir/bin/scontrol" <<SHIM
#!/bin/sh
echo "scontrol	\$*" >>"$log"
[ "\$1 \$2" = "show hostnames" ] && printf 'gpu-a17\ngpu-a18\n'
SHIM
cat >"$dir/bin/twincache-gen" <<SHIM
#!/bin/sh
echo "twincache-gen	\$*" >>"$log"
# the real generator on a tiny cache: --graphs N becomes 64, in chunks of 8
n=\$#
while [ \$n -gt 0 ]; do
  a=\$1; shift; n=\$((n - 1))
  if [ "\$a" = --graphs ]; then shift; n=\$((n - 1)); set -- "\$@" --graphs 64; else set -- "\$@" "\$a"; fi
done
exec "$gen" "\$@" --chunk-graphs 8 --quiet
SHIM
chmod +x "$dir/bin/"*
PATH=$dir/bin:$PATH
export PATH
check() { # check WHAT CONDITION...: ok or FAIL
  what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
set_dir=$dir/set

# submit.sh: the array, then training after it (run from the repository root)
(cd "$src" && bash examples/slurm/submit.sh "$set_dir") >"$dir/submit.out" 2>&1
check "submit.sh exits 0" [ $? -eq 0 ]
check "submit.sh submits gen.sbatch with SET" \
  grep -q "^sbatch	--parsable --export=ALL,SET=$set_dir .*examples/slurm/gen.sbatch\$" "$log"
check "submit.sh submits train.sbatch after the array" \
  grep -q "^sbatch	--parsable --dependency=afterok:4242 --export=ALL,SET=$set_dir .*examples/slurm/train.sbatch\$" "$log"

# gen.sbatch without SET: one line, non-zero
: >"$log"
err=$(env -u SET bash "$src/examples/slurm/gen.sbatch" 2>&1)
rc=$?
check "gen.sbatch without SET is refused naming SET ($err)" \
  sh -c '[ "$1" -ne 0 ] && [ "$(printf "%s\n" "$2" | wc -l)" -eq 1 ] && printf "%s" "$2" | grep -q SET' _ "$rc" "$err"
check "gen.sbatch without SET runs nothing" [ ! -s "$log" ]

# gen.sbatch as the 8 tasks of its array (#SBATCH --array=0-7)
tasks=$(sed -n 's/^#SBATCH --array=0-\([0-9]*\)$/\1/p' "$src/examples/slurm/gen.sbatch")
tasks=$((tasks + 1))
check "gen.sbatch's array has 8 tasks" [ "$tasks" -eq 8 ]
i=0
while [ $i -lt $tasks ]; do
  SET=$set_dir SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$tasks SLURM_CPUS_PER_TASK=2 \
    bash "$src/examples/slurm/gen.sbatch" >>"$dir/gen.out" 2>&1 || { echo "FAIL: gen.sbatch task $i"; cat "$dir/gen.out"; fail=1; }
  i=$((i + 1))
done
check "gen.sbatch task 5 runs --shard 5/8 into SET with the task's CPUs" \
  grep -q "^twincache-gen	--out $set_dir --shard 5/8 .* --threads 2\$" "$log"
n=$(ls -d "$set_dir"/shard-000[0-7][0-9]-of-00008 2>/dev/null | wc -l)
check "the 8 tasks wrote the set's 8 shards ($n)" [ "$n" -eq 8 ]

# stage-local.sh as node 1 of 2: shards 1, 3, 5, 7, data.mdb only
out=$(SLURM_NODEID=1 SLURM_NNODES=2 bash "$src/examples/slurm/stage-local.sh" "$set_dir" "$dir/local1" 2>&1)
check "stage-local.sh node 1 of 2: $out" [ "$out" = "node 1 of 2: 4 shards in $dir/local1" ]
got=$(cd "$dir/local1" && find . -type f | sort | tr '\n' ' ')
want="./shard-00001-of-00008/data.mdb ./shard-00003-of-00008/data.mdb ./shard-00005-of-00008/data.mdb ./shard-00007-of-00008/data.mdb "
check "stage-local.sh copied shards 1, 3, 5, 7 ($got)" [ "$got" = "$want" ]
for bad in "$dir/no-such-set" "$dir/bin"; do
  err=$(SLURM_NODEID=0 SLURM_NNODES=2 bash "$src/examples/slurm/stage-local.sh" "$bad" "$dir/local0" 2>&1)
  rc=$?
  check "stage-local.sh refuses $bad in one line, non-zero ($rc: $err)" \
    sh -c '[ "$1" -ne 0 ] && [ "$(printf "%s\n" "$2" | wc -l)" -eq 1 ] && printf "%s" "$2" | grep -q "$3"' _ "$rc" "$err" "$bad"
done
check "stage-local.sh refused before copying anything" [ ! -e "$dir/local0" ]

# train.sbatch on 2 nodes x 4 tasks: what srun would start
: >"$log"
SET=$set_dir SLURM_JOB_NODELIST='gpu-a[17-18]' SLURM_CPUS_PER_TASK=8 \
  bash "$src/examples/slurm/train.sbatch" >"$dir/train.out" 2>&1
check "train.sbatch exits 0" [ $? -eq 0 ]
check "train.sbatch asks scontrol for the job's hosts" grep -q "^scontrol	show hostnames gpu-a\[17-18\]\$" "$log"
check "train.sbatch's tasks meet at the first node, port 29500, 8 threads" \
  grep -q "^srun-env	MASTER_ADDR=gpu-a17 MASTER_PORT=29500 OMP_NUM_THREADS=8\$" "$log"
cmd=$(sed -n 's/^srun	//p' "$log")
check "srun runs train_avici.py on SET: $cmd" \
  sh -c 'case "$1" in *"python examples/train_avici.py --data twincache --cache $2 "*) ;; *) exit 1 ;; esac' _ "$cmd" "$set_dir"
# every flag srun passes is one train_avici.py defines
for flag in $(printf '%s\n' "$cmd" | tr ' ' '\n' | grep '^--'); do
  case $flag in --kill-on-bad-exit=*) continue ;; esac
  grep -q "add_argument(\"$flag\"" "$src/examples/train_avici.py" ||
    { echo "FAIL: train.sbatch passes $flag, which train_avici.py does not define"; fail=1; }
done
[ -f "$src/examples/train_avici.py" ] || { echo "FAIL: examples/train_avici.py missing"; fail=1; }
[ $fail -eq 0 ] && rm -rf "$dir"
exit $fail
