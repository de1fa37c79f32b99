"""Building a cache from Python: a thin wrapper over the twincache-gen program.

    twincache.generate("cache.lmdb", graphs=10000, nodes=(10, 20), mechanism="mlp",
                       targets=3, seed=1, threads=4)

Keyword arguments become flags: nodes=(10, 20) -> --nodes 10:20, edge_prob=0.3 ->
--edge-prob 0.3, standardize=True -> --standardize (False leaves it out). Run
`twincache-gen --help` for every flag. Progress: the program's progress line
and summary go to this process's stderr as they are printed (progress=False
passes --quiet). Rerunning the same call resumes an interrupted cache.

A program is found, first match wins: $TWINCACHE_GEN (TWINCACHE_LOADER_BENCH for
twincache-loader-bench, ...); next to the library
(same folder, ../bin of an installed prefix, or the gen/, tools/, train/, bench/
folders of the build tree holding the library); the scripts folder of this
Python environment (where `pip install` puts them); PATH.
"""
import os
import shutil
import subprocess
import sys
import sysconfig

from . import _capi
from .errors import Error, InvalidArgument, Mismatch


def find_program(name="twincache-gen"):
    """Path of a twincache program (see the module text for the order)."""
    var = "TWINCACHE_" + name.split("-", 1)[1].upper().replace("-", "_")
    env = os.environ.get(var)
    if env:
        return env
    libdir = os.path.dirname(os.path.realpath(_capi.library_path))
    # installed: PREFIX/lib/../bin; build tree: the programs' component folders
    for sub in (".", os.path.join("..", "bin"), "gen", "tools", "train", "bench"):
        cand = os.path.join(libdir, sub, name)
        if os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    # pip install: the environment's scripts folder (a venv's bin/, on PATH
    # only when the venv is activated)
    cand = os.path.join(sysconfig.get_path("scripts"), name)
    if os.access(cand, os.X_OK):
        return cand
    found = shutil.which(name)
    if found:
        return found
    raise Error(f"{name} not found next to {_capi.library_path} nor on PATH: build it "
                f"(pip install ., or cmake --build build/release) or set {var}=/path/to/{name}")


def _flag_value(v):
    if isinstance(v, (tuple, list)):
        return ":".join(str(x) for x in v)
    return str(v)


def generate(out, progress=True, **flags):
    """Runs twincache-gen --out OUT with `flags`; returns the output path.
    Raises InvalidArgument for a flag the program rejects (exit 2), Mismatch
    when OUT holds a cache built with other options (exit 3) and Error for any
    other failure, with the program's last stderr line."""
    if not isinstance(out, (str, os.PathLike)):
        raise InvalidArgument(f"out must be a path, not {type(out).__name__}")
    cmd = [find_program("twincache-gen"), "--out", os.fspath(out)]
    for k, v in flags.items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            cmd.append(flag)
        elif v is False or v is None:
            continue
        else:
            cmd += [flag, _flag_value(v)]
    if not progress:
        cmd.append("--quiet")
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, bufsize=1)
    last = ""
    for line in p.stderr:  # pass through as it comes
        if progress:
            sys.stderr.write(line)
            sys.stderr.flush()
        if line.strip():
            last = line.strip()
    rc = p.wait()
    if rc == 0:
        return os.fspath(out)
    # the program's line already starts with "twincache-gen:"
    msg = last if last.startswith("twincache-gen:") else f"twincache-gen: {last}"
    if rc == 2:
        raise InvalidArgument(msg, rc)
    if rc == 3:  # the cache was built with other options
        raise Mismatch(msg, _capi.EMISMATCH)
    raise Error(f"{msg} (exit status {rc})", rc)
