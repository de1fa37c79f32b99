#!/bin/sh
# Every bad flag or value of twincache-train exits 2 with ONE stderr line
# that names the flag. Usage: bad_flags.sh TWINCACHE_TRAIN
train=$1
fail=0
check() {
  flag=$1; shift
  err=$("$train" "$@" 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q -- "$flag"; then
    echo "FAIL: '$*' -> exit $rc, stderr: $err"
    fail=1
  else
    echo "ok: '$*' -> $err"
  fi
}
check --cache                                   # missing required flag
check --batch      --cache d --batch 0
check --batch      --cache d --batch x
check --batch      --cache d --batch=99999
check --steps      --cache d --steps -3
check --lr         --cache d --lr 0
check --lr         --cache d --lr abc
check --val-split  --cache d --val-split 1
check --val-split  --cache d --val-split -0.1
check --device     --cache d --device tpu
check --threads    --cache d --threads 0
check --weight-decay --cache d --weight-decay -1
check --pos-weight --cache d --pos-weight 0
check --warmup     --cache d --warmup 1.5
check --eval-every --cache d --eval-every
check --batch-log  --cache d --batch-log
check --bogus      --cache d --bogus 3
check stray        --cache d stray
# hostile numbers on every integer flag: signs, 2^64 and near it, exponents,
# hex, junk, empty; the line names the flag and the accepted range
for f in --batch --steps --warmup --threads --cpu-threads --eval-every \
            --checkpoint-every --stop-after; do
  for v in -1 18446744073709551616 18446744073709551417 1e3 '' 0x10 7junk +7 ' 7'; do
    check "$f: expected an integer in \[" --cache d "$f" "$v"
  done
done
check "--seed: expected an integer in \[0, 18446744073709551615\]" --cache d --seed 18446744073709551616
check "--seed" --cache d --seed -1
check "--val-split: expected a number in \[0, 1)" --cache d --val-split 1e3
check "--lr" --cache d --lr nan
check "--lr" --cache d --lr 1e999
check "--json" --cache d --json=1
check "--gpu: the CUDA backend's, not with --device cpu" --cache d --device cpu --gpu 0
check "--nccl: the CUDA backend's, not with --device cpu" --cache d --device cpu --nccl
check "--gpu: expected an integer in \[0, 1023\]" --cache d --gpu -1
check "--gpu" --cache d --gpu 1024
# a GPU that does not exist is a runtime refusal (exit 1), before the cache
# is opened: one line naming --gpu and why (no GPU here, or not that many)
err=$("$train" --cache d --gpu 1023 2>&1 >/dev/null)
rc=$?
case "$err" in
  "twincache-train: --gpu: "*"no usable CUDA device"* | "twincache-train: --gpu: built without CUDA"* | \
    "twincache-train: --gpu: device 1023 does not exist"*)
    [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && echo "ok: --gpu 1023 -> $err" ||
      { echo "FAIL: --gpu 1023 -> exit $rc: $err"; fail=1; } ;;
  *) echo "FAIL: --gpu 1023 -> exit $rc: $err"; fail=1 ;;
esac
"$train" --help >/dev/null || { echo "FAIL: --help exit $?"; fail=1; }
"$train" --help | grep -q -- "--gpu N" || { echo "FAIL: --help lacks --gpu"; fail=1; }
exit $fail
