#!/bin/sh
# The validation loader is opened once per run and read one epoch per
# evaluation: every evaluation must see the same graphs and the same worlds.
# With a learning rate too small to move a float32 parameter (1e-30) the
# model is fixed, so every validation row must be identical — on the
# held-out tail, on fresh worlds (epoch 0's draw each time) and on a
# --val-cache whose graph count is not a multiple of the batch.
# Usage: eval_repeat.sh TWINCACHE_GEN TWINCACHE_TRAIN SCRATCH_DIR
set -eu
gen=$1 train=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
"$gen" --out "$dir/cache" --graphs 120 --samples 16 --nodes 4:7 --seed 5 --threads 2 --quiet
"$gen" --out "$dir/val" --graphs 21 --samples 16 --nodes 4:7 --seed 9 --threads 2 --quiet
common="--cache $dir/cache --device cpu --batch 8 --steps 8 --eval-every 2 --threads 2 --seed 3 --lr 1e-30 --quiet"
for extra in "" "--fresh-rows 12" "--val-cache $dir/val"; do
  "$train" $common $extra --log "$dir/log.csv"
  rows=$(tail -n +2 "$dir/log.csv" | awk -F, '$4 != ""' | wc -l)
  distinct=$(tail -n +2 "$dir/log.csv" | awk -F, '$4 != ""' | cut -d, -f4- | sort -u | wc -l)
  if [ "$rows" -ne 4 ] || [ "$distinct" -ne 1 ]; then
    echo "FAIL ($extra): $rows evaluations, $distinct distinct validation rows (want 4 and 1):"
    cat "$dir/log.csv"
    exit 1
  fi
done
echo "eval_repeat: 4 evaluations alike on the tail, on fresh worlds and on a validation cache"
