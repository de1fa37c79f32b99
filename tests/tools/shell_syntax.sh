#!/bin/sh
# Every shell script shipped in the tree parses (issue 35: both Slurm batch
# scripts were bash syntax errors, found only when sbatch ran them). Found by
# a glob, so a new script is covered without editing this list: *.sh,
# *.sbatch, *.bash, and any extension-less file whose first line is a
# sh/bash shebang (.ci/run). `bash -n` on each; `sh -n` too on a #!/bin/sh one.
# Usage: shell_syntax.sh SOURCE_DIR
src=$1
[ -d "$src" ] || { echo "FAIL: $src is not a directory"; exit 1; }
list=$(mktemp) || exit 1
trap 'rm -f "$list"' EXIT
# build outputs, git's files and virtual environments are not shipped scripts
find "$src" \( -name .git -o -name 'build*' -o -name '.venv*' -o -name venv -o -name node_modules \) -prune -o \
  -type f \( -name '*.sh' -o -name '*.sbatch' -o -name '*.bash' -o ! -name '*.*' \) -print | sort >"$list"
fail=0 n=0
while IFS= read -r f; do
  first=$(head -n 1 "$f" 2>/dev/null | tr -d '\0')
  case $f in
    *.sh|*.sbatch|*.bash) ;;
    *) case $first in '#!'*sh|'#!'*sh' '*|'#!'*'env bash'*|'#!'*'env sh'*) ;; *) continue ;; esac ;;
  esac
  n=$((n + 1))
  if ! err=$(bash -n "$f" 2>&1); then
    echo "FAIL: bash -n ${f#"$src"/}: $err"; fail=1
  fi
  case $first in
    '#!/bin/sh'*) if ! err=$(sh -n "$f" 2>&1); then echo "FAIL: sh -n ${f#"$src"/}: $err"; fail=1; fi ;;
  esac
done <"$list"
# the scripts this test was written for must be among those found
for must in examples/slurm/gen.sbatch examples/slurm/train.sbatch examples/slurm/stage-local.sh .ci/run tools/run-tests.sh; do
  grep -qx "$src/$must" "$list" || { echo "FAIL: $must not found by the glob"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: $n shell scripts parse"
exit $fail
