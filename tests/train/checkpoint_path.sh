#!/bin/sh
# --checkpoint is checked before anything is trained (issue 19): a directory,
# a path in a directory that does not exist, or (when not root) one in a
# read-only directory exits 1 with one line naming --checkpoint, before the
# cache is even opened (the cache given does not exist, so a run that got
# further would name it instead). Usage: checkpoint_path.sh TWINCACHE_TRAIN SCRATCH
train=$1
scratch=$2
fail=0
rm -rf "$scratch" && mkdir -p "$scratch/ckdir" "$scratch/ro" || exit 1
check() {
  what=$1; shift
  err=$("$train" --cache "$scratch/no-such-cache" --steps 1 --device cpu "$@" 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q -- "--checkpoint: .*$what"; then
    echo "FAIL: '$*' -> exit $rc, stderr: $err"
    fail=1
  else
    echo "ok: '$*' -> $err"
  fi
}
check "is a directory" --checkpoint "$scratch/ckdir"
check "cannot create" --checkpoint "$scratch/missing/run.ckpt"
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
  chmod 555 "$scratch/ro"
  check "cannot create" --checkpoint "$scratch/ro/run.ckpt"
  chmod 755 "$scratch/ro"
fi
# a writable file name passes the check (the run then fails on the cache)
err=$("$train" --cache "$scratch/no-such-cache" --steps 1 --device cpu --checkpoint "$scratch/ok.ckpt" 2>&1 >/dev/null)
if ! printf '%s' "$err" | grep -q "no-such-cache" || [ -e "$scratch/ok.ckpt.tmp" ]; then
  echo "FAIL: a writable --checkpoint was refused or left its probe: $err"
  fail=1
fi
[ $fail -eq 0 ] && rm -rf "$scratch"
exit $fail
