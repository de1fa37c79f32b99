#!/usr/bin/env bash
# Copies node k of M's shards of a cache set to this node's local disk, for
# local mode (README "Local mode"): node k holds shards k, k+M, k+2M, ...
#   stage-local.sh SET LOCAL_DIR [NODE NODES]
# NODE/NODES default to Slurm's SLURM_NODEID/SLURM_NNODES, so one task per
# node does it: srun --ntasks-per-node=1 examples/slurm/stage-local.sh "$SET" /local/nvme/set
# Only data.mdb is copied (the reader makes its own lock file). Then each
# rank opens LOCAL_DIR with local_nodes = NODES (Loader(LOCAL_DIR, local=NODES)).
set -euo pipefail
set_dir=${1:?usage: stage-local.sh SET LOCAL_DIR [NODE NODES]}
local_dir=${2:?usage: stage-local.sh SET LOCAL_DIR [NODE NODES]}
node=${3:-${SLURM_NODEID:?give NODE NODES or run under Slurm}}
nodes=${4:-${SLURM_NNODES:?give NODE NODES or run under Slurm}}
mkdir -p "$local_dir"
found=0
for d in "$set_dir"/shard-*-of-*; do
  name=${d##*/}                       # shard-IIIII-of-NNNNN
  i=$((10#${name:6:5}))
  if (( i % nodes == node )); then
    mkdir -p "$local_dir/$name"
    cp "$d/data.mdb" "$local_dir/$name/data.mdb.tmp" && mv "$local_dir/$name/data.mdb.tmp" "$local_dir/$name/data.mdb"
    found=$((found + 1))
  fi
done
echo "node $node of $nodes: $found shards in $local_dir"
