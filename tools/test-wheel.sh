#!/usr/bin/env bash
# tools/test-wheel.sh [WHEEL] — the portable wheel the way a cluster user meets
# it: a Debian root filesystem with Python and nothing of ours (debootstrap
# --variant=minbase + python3-venv: no -dev package, no compiler), entered with
# chroot; there a venv gets the wheel and numpy (pip, from local files), and
#   1. ldd of libtwincache.so and every program: glibc's libraries only;
#   2. twincache-gen (under LD_DEBUG=libs: every library it loads is glibc's);
#   3. twincache-inspect verify;
#   4. the Python Loader (libtwincache.so from the venv), numpy output, shapes
#      and a graph's adjacency checked;
#   5. twincache-suite build of all v1 and v2 cells (each digest: the same
#      bytes as the tree's build, every graph family, mechanism and world kind);
#   6. twincache-train --steps 20 on the CPU;
#   7. started as one of 2 MPI ranks with no MPI there: refused by name;
#   8. the CUDA plugin (when the wheel has one), with no GPU or driver there:
#      glibc's libraries only; --device cuda loads it and is refused with its
#      CUDA runtime's reason; --device auto says so and trains on the CPU;
# and, on this machine when it has Open MPI (CI's), 9. the wheel's trainer
# under mpirun -np 2 loads it at run time (the tree's linked one: same log).
# WHEEL defaults to tools/build-wheel.sh's (built when missing). Needs root
# (debootstrap, chroot, mount of /proc); installs debootstrap when missing.
# SUITES (default "bookworm bullseye") names the Debian releases to test in; the
# pristine root filesystem of each is kept as build/wheel-test/SUITE.tar and
# reused; TWINCACHE_WHEEL_FRESH=1 (or rm -rf build/wheel-test) makes it anew.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/build/wheel-test
. "$root/tools/wheel/apt-mirror.sh"  # apt_mirror
suites=${SUITES:-bookworm bullseye}  # glibc 2.36 + Python 3.11; glibc 2.31 + Python 3.9
numpy_spec=${TWINCACHE_WHEEL_NUMPY:-numpy==2.0.2}  # 2.0.2: wheels for CPython 3.9 to 3.12
t0=$(date +%s)

die() { echo "test-wheel: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mount)"
whl=${1:-}
if [ -z "$whl" ]; then
  whl=$(ls build/wheel/dist/twincache-*.whl 2>/dev/null | head -1 || true)
  [ -n "$whl" ] || { tools/build-wheel.sh; whl=$(ls build/wheel/dist/twincache-*.whl | head -1); }
fi
[ -f "$whl" ] || die "no wheel at $whl"
whl=$(realpath "$whl")
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null ||
  die "could not install debootstrap"
mkdir -p "$work"

rootfs=$work/rootfs
# never delete through a live mount: unmount /proc first, refuse if it stays
unmount_rootfs() {
  if mountpoint -q "$rootfs/proc" 2>/dev/null; then umount "$rootfs/proc"; fi
}
clear_rootfs() {
  unmount_rootfs
  if findmnt -rn -o TARGET | grep -q "^$rootfs/"; then
    die "something is still mounted under $rootfs; not deleting it"
  fi
  rm -rf "$rootfs"
}
trap unmount_rootfs EXIT

for suite in $suites; do
  tarball=$work/$suite.tar
  if [ ! -f "$tarball" ] || [ "${TWINCACHE_WHEEL_FRESH:-0}" = 1 ]; then
    echo "== debootstrap --variant=minbase $suite (python3, python3-venv)"
    t1=$(date +%s)
    clear_rootfs
    read -r mirror _ <<<"$(apt_mirror)"
    [ -n "$mirror" ] || die "no deb line in /etc/apt/sources.list{,.d}: no mirror for debootstrap"
    debootstrap --variant=minbase --include=python3,python3-venv "$suite" "$rootfs" \
      "$mirror" >"$work/debootstrap-$suite.log" 2>&1 ||
      { tail -20 "$work/debootstrap-$suite.log"; die "debootstrap $suite failed"; }
    tar -C "$rootfs" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    echo "   $(( $(date +%s) - t1 )) s"
  fi
  clear_rootfs
  mkdir -p "$rootfs"
  tar -C "$rootfs" -xf "$tarball"
  pyver=$(chroot "$rootfs" /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  echo "== $suite: Python $pyver, $(chroot "$rootfs" /usr/bin/ldd --version | head -1)"
  chroot "$rootfs" sh -c 'command -v cc gcc clang' >/dev/null && die "$suite root filesystem has a compiler"

  # the wheel and numpy, as files: the chroot installs with --no-index
  mkdir -p "$rootfs/wheels" "$work/numpy"
  cp "$whl" "$rootfs/wheels/"
  /usr/bin/python3 -m pip download -q --no-deps --only-binary=:all: --implementation cp \
    --python-version "$pyver" --platform manylinux2014_x86_64 -d "$work/numpy" "$numpy_spec" ||
    die "could not download $numpy_spec for CPython $pyver"
  cp "$work"/numpy/numpy-*-cp${pyver/./}-*.whl "$rootfs/wheels/"

  cat >"$rootfs/test-wheel-inside.sh" <<'EOF'
set -eu
cd /tmp
python3 -m venv /opt/venv
/opt/venv/bin/pip install -q --no-index --find-links /wheels twincache
bin=/opt/venv/bin
lib=$(find /opt/venv -name 'libtwincache.so*')

echo "-- 1. ldd: glibc only"
bad=0
for f in "$lib" "$bin"/twincache-gen "$bin"/twincache-inspect "$bin"/twincache-train "$bin"/twincache-loader-bench; do
  [ -f "$f" ] || { echo "missing from the wheel: $f"; bad=1; continue; }
  # a line: "libx.so => /path (addr)", "/lib64/ld-linux... (addr)" or "linux-vdso.so.1 (addr)"
  out=$(ldd "$f" | awk '$1 !~ /^(linux-vdso\.so\.1|\/lib64\/ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt)\.so\.[0-9]+)$/')
  if [ -n "$out" ]; then echo "$f links outside glibc: $out"; bad=1; fi
done
[ "$bad" = 0 ] || exit 1

echo "-- 2. twincache-gen (LD_DEBUG=libs)"
LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld-gen "$bin"/twincache-gen --out /tmp/c --graphs 512 --nodes 5:8 \
  --samples 16 --seed 4 --threads 2 --quiet
loaded=$(cat /tmp/ld-gen.* | sed -n 's/.*calling init: //p' | sort -u)
echo "$loaded" | sed 's/^/   loaded /'
outside=$(echo "$loaded" | grep -Ev '^/lib/x86_64-linux-gnu/lib(c|m|pthread|dl|rt)\.so\.[0-9]+$|^/lib64/ld-linux-x86-64\.so\.2$' || true)
[ -z "$outside" ] || { echo "twincache-gen loaded outside glibc: $outside"; exit 1; }

echo "-- 3. twincache-inspect verify"
"$bin"/twincache-inspect verify /tmp/c

echo "-- 4. the Python Loader (numpy)"
"$bin"/python - <<'PY'
import numpy as np, twincache
print("   twincache", twincache.__version__, "from", twincache.library_path)
assert twincache.library_path.startswith("/opt/venv/"), twincache.library_path
with twincache.Cache("/tmp/c") as c:
    n, adj0 = len(c), c[0].adj
loader = twincache.Loader("/tmp/c", batch_size=32, epochs=1, threads=2, output="numpy", shuffle=False)
seen = 0
for b in loader:
    assert isinstance(b.base, np.ndarray) and b.base.shape[0] == 32 and b.base.dtype == np.float32
    if seen == 0:
        assert b.graph_id[0] == 0 and np.array_equal(b.adj[0, :adj0.shape[0], :adj0.shape[0]], adj0)
    seen += int(b.valid.sum())
loader.close()
assert seen == n, (seen, n)
print(f"   {seen} graphs in batches of 32, numpy {np.__version__}")
PY
echo "-- 5. twincache-suite build: all v1 and v2 cells, each digest checked (the tree's bytes)"
# (sh has no pipefail: the log goes to a file, its status is the program's)
"$bin"/twincache-suite build /tmp/suite >/tmp/suite.log 2>&1 || { cat /tmp/suite.log; exit 1; }
tail -1 /tmp/suite.log
rm -rf /tmp/suite
# v2: independent worlds, rows per world (its real-data cell needs cdt: skipped)
"$bin"/twincache-suite build --recipe v2 /tmp/suite2 >/tmp/suite2.log 2>&1 || { cat /tmp/suite2.log; exit 1; }
tail -1 /tmp/suite2.log
rm -rf /tmp/suite2

echo "-- 6. twincache-train --steps 20 (CPU)"
"$bin"/twincache-train --cache /tmp/c --steps 20 --batch 16 --device cpu >/tmp/train.log 2>&1 ||
  { cat /tmp/train.log; exit 1; }
tail -3 /tmp/train.log

echo "-- 7. started as one of 2 MPI ranks, no MPI here: refused, naming what to set"
if OMPI_COMM_WORLD_SIZE=2 "$bin"/twincache-train --cache /tmp/c --steps 1 --device cpu >/tmp/mpi.log 2>&1; then
  cat /tmp/mpi.log; echo "2 ranks without an MPI were not refused"; exit 1
fi
grep -q "one of 2 (OMPI_COMM_WORLD_SIZE=2).*TWINCACHE_MPI_LIBRARY" /tmp/mpi.log || { cat /tmp/mpi.log; exit 1; }
echo "   $(grep -o 'one of 2[^;]*' /tmp/mpi.log | head -1): refused"

echo "-- 8. the CUDA plugin, no GPU or driver here"
plugin=/opt/venv/lib/twincache/libtwincache_cuda.so
if [ -f "$plugin" ]; then
  out=$(ldd "$plugin" | awk '$1 !~ /^(linux-vdso\.so\.1|\/lib64\/ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt)\.so\.[0-9]+)$/')
  [ -z "$out" ] || { echo "$plugin links outside glibc: $out"; exit 1; }
  if "$bin"/twincache-train --cache /tmp/c --steps 1 --device cuda >/tmp/cuda.log 2>&1; then
    cat /tmp/cuda.log; echo "--device cuda trained without a GPU"; exit 1
  fi
  grep -q "^twincache-train: --device cuda: no usable CUDA device (" /tmp/cuda.log ||
    { cat /tmp/cuda.log; echo "--device cuda was not refused with the CUDA runtime's reason"; exit 1; }
  echo "   $(cat /tmp/cuda.log)"
  LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld-train "$bin"/twincache-train --cache /tmp/c --steps 2 --batch 16 >/tmp/auto.log 2>&1 ||
    { cat /tmp/auto.log; exit 1; }
  grep -q "^device: cpu (no usable CUDA device (" /tmp/auto.log || { cat /tmp/auto.log; echo "--device auto did not say why"; exit 1; }
  loaded=$(cat /tmp/ld-train.* | sed -n 's/.*calling init: //p' | sort -u)
  echo "$loaded" | grep -q "libtwincache_cuda.so$" || { echo "the plugin was not loaded: $loaded"; exit 1; }
  outside=$(echo "$loaded" | grep -Ev '^/lib/x86_64-linux-gnu/lib(c|m|pthread|dl|rt)\.so\.[0-9]+$|^/lib64/ld-linux-x86-64\.so\.2$|^/opt/venv/bin/\.\./lib/twincache/libtwincache_cuda\.so$' || true)
  [ -z "$outside" ] || { echo "twincache-train loaded outside glibc and the wheel: $outside"; exit 1; }
  echo "   --device auto: $(head -1 /tmp/auto.log); loaded glibc and the plugin only"
else
  echo "   the wheel has no CUDA plugin (built without nvcc): its trainer is CPU-only"
fi
echo "inside: passed"
EOF
  mount -t proc proc "$rootfs/proc"
  echo "== $suite: the wheel in a venv, then the checks"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    chroot "$rootfs" /bin/sh /test-wheel-inside.sh || die "$suite: the wheel failed in the chroot (above)"
  unmount_rootfs
done
clear_rootfs

# 9. here, where an Open MPI is installed (CI's): the wheel's trainer loads
# it at run time under mpirun and trains as the tree's linked trainer does
if command -v mpirun >/dev/null && ldconfig -p | grep -q 'libmpi\.so\.40 '; then
  echo "== this machine: the wheel's twincache-train under mpirun -np 2 (Open MPI loaded at run time)"
  h=$work/host
  rm -rf "$h" && mkdir -p "$h"
  /usr/bin/python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$h/whl"
  wtrain=$(find "$h/whl" -name twincache-train -type f | head -1)
  wgen=$(find "$h/whl" -name twincache-gen -type f | head -1)
  [ -n "$wtrain" ] && [ -n "$wgen" ] || die "the wheel has no twincache-train/-gen"
  chmod +x "$wtrain" "$wgen"
  ! ldd "$wtrain" | grep -q libmpi || die "the wheel's twincache-train is linked to an MPI"
  "$wgen" --out "$h/c" --graphs 120 --samples 16 --nodes 4:6 --seed 9 --threads 2 --quiet
  mpi="mpirun --oversubscribe --allow-run-as-root --timeout 120 -np 2"
  common="--cache $h/c --val-split 0.2 --device cpu --steps 20 --eval-every 10 --threads 1 --seed 4 --batch 4"
  $mpi "$wtrain" $common --log "$h/wheel.csv" >"$h/wheel.txt" 2>&1 || { cat "$h/wheel.txt"; die "mpirun of the wheel's trainer failed"; }
  grep -o "data parallel: 2 rank(s).*loaded at run time from [^)]*" "$h/wheel.txt" ||
    { cat "$h/wheel.txt"; die "the wheel's trainer did not train as 2 ranks over a loaded MPI"; }
  tree=$root/build/release/train/twincache-train
  if [ -x "$tree" ] && ldd "$tree" | grep -q libmpi; then
    $mpi "$tree" $common --quiet --log "$h/tree.csv"
    cmp "$h/wheel.csv" "$h/tree.csv" || die "the wheel's 2-rank log differs from the tree's linked trainer's"
    echo "   the same log, bit for bit, as the tree's trainer linked to MPI"
  fi
fi
echo "test-wheel: $(basename "$whl") passed in ${suites} in $(( $(date +%s) - t0 )) s"
