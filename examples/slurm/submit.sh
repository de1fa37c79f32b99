#!/usr/bin/env bash
# Builds a cache set as a Slurm array, then trains on it on 2 nodes x 4 GPUs
# once every shard is done (afterok: a failed shard stops the training job).
#   examples/slurm/submit.sh /scratch/$USER/twin-set      # run from the repository root
# Edit the #SBATCH lines of gen.sbatch and train.sbatch for your cluster
# (partition, account, time); SHARDS must match gen.sbatch's --array size.
set -euo pipefail
set_dir=${1:?usage: submit.sh SET_DIR}
here=$(cd "$(dirname "$0")" && pwd)
gen=$(sbatch --parsable --export=ALL,SET="$set_dir" "$here/gen.sbatch")
echo "generation: job array $gen -> $set_dir"
train=$(sbatch --parsable --dependency=afterok:"$gen" --export=ALL,SET="$set_dir" "$here/train.sbatch")
echo "training: job $train (starts when array $gen has succeeded)"
