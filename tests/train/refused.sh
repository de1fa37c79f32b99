# refused.sh — sourced by the trainer's CLI tests (sh):
#   refused RC WORDS COMMAND [ARG...]
# runs COMMAND and passes when it exits RC and writes one line to stderr
# holding WORDS (a grep pattern); stdout is discarded. Prints "ok: refused:
# LINE" or "FAIL: ..." and then sets fail=1; never exits, so a script goes
# on to its other refusals and ends with `exit $fail`.
refused() {
  want_rc=$1 words=$2
  shift 2
  err=$("$@" 2>&1 >/dev/null) && rc=0 || rc=$?
  if [ "$rc" -ne "$want_rc" ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] ||
     ! printf '%s' "$err" | grep -q -- "$words"; then
    echo "FAIL: exit $rc, want $want_rc and one line with \"$words\": $err"
    fail=1
  else
    echo "ok: refused: $err"
  fi
}
