#!/usr/bin/env bash
# Installs what twincache needs to build and test, from Debian packages.
# Idempotent: installs only what is missing. Run as root or with sudo.
set -euo pipefail

# The Python binding's tests run under Debian's /usr/bin/python3 with these,
# and in a venv (python3-venv) with numpy 2 / torch 2 from the package index.
# Open MPI: data-parallel twincache-train (mpirun) and its tests.
need=(build-essential cmake pkg-config libzstd-dev libxxhash-dev liblmdb-dev libigraph-dev
      python3 python3-numpy python3-torch python3-pytest python3-venv libopenmpi-dev openmpi-bin)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present (${need[*]})"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: need root to install: ${missing[*]} (run: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
