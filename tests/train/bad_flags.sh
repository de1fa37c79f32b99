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
check --bogus      --cache d --bogus 3
check stray        --cache d stray
"$train" --help >/dev/null || { echo "FAIL: --help exit $?"; fail=1; }
exit $fail
