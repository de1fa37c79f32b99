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
die() { echo "stage-local.sh: $*" >&2; exit 2; }
case $node in ''|*[!0-9]*) die "NODE '$node' is not a number" ;; esac
case $nodes in ''|*[!0-9]*) die "NODES '$nodes' is not a number" ;; esac
node=$((10#$node)) nodes=$((10#$nodes))
(( nodes >= 1 && node < nodes )) || die "NODE $node of NODES $nodes: need 0 <= NODE < NODES"
[[ -d $set_dir ]] || die "$set_dir is not a directory (give the cache set's directory)"
shopt -s nullglob
shards=("$set_dir"/shard-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9])
(( ${#shards[@]} > 0 )) || die "$set_dir holds no shard-IIIII-of-NNNNN directory: not a cache set"
mine=()
for d in "${shards[@]}"; do
  name=${d##*/}                       # shard-IIIII-of-NNNNN
  [[ -f $d/data.mdb ]] || die "$d has no data.mdb (a shard not yet written?)"
  (( 10#${name:6:5} % nodes == node )) && mine+=("$d")
done
(( ${#mine[@]} > 0 )) || die "node $node of $nodes: none of the ${#shards[@]} shards of $set_dir falls to it (more nodes than shards)"
mkdir -p "$local_dir"
for d in "${mine[@]}"; do
  name=${d##*/}
  mkdir -p "$local_dir/$name"
  cp "$d/data.mdb" "$local_dir/$name/data.mdb.tmp"
  mv "$local_dir/$name/data.mdb.tmp" "$local_dir/$name/data.mdb"
done
echo "node $node of $nodes: ${#mine[@]} shards in $local_dir"
