"""twincache.suite.cells — building a suite's cells with twincache-gen (each
checked against the recipe's digest), what they occupy on disk, and their
sortability from twincache-inspect stats."""
import json
import os
import subprocess
import time

from ..cache import Cache
from ..gen import find_program
from .errors import SuiteError
from .real import build_cell, is_real
from .recipe import cache_digest, cell_dir, cell_worlds, gen_args, load_recipe, select_cells


def build(root, threads=2, cells=None, recipe=None, check=True, progress=print, sources=None):
    """Generates every selected cell under root/<cell> with twincache-gen and
    checks its digest. Returns {cell: (digest, seconds)}. Raises SuiteError
    naming the first cell whose digest differs (the cache stays, for a look)
    or whose cache holds other worlds than the cell's `worlds` (twin or
    independent: a directory built before under that name). A real cell
    (real.py) is imported from its package's pinned files: sources maps a
    package name to a wheel file or folder (else the installed package);
    where the package is not found the cell is skipped with one progress
    line and left out of the result."""
    recipe = recipe or load_recipe()
    sel = select_cells(recipe, cells)
    if os.path.exists(root) and not os.path.isdir(root):
        raise SuiteError(f"{root}: exists and is not a directory (build makes DIR/<cell> for "
                         "each cell)")
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as e:
        raise SuiteError(f"{root}: cannot create the directory: {e.strerror}") from None
    gen = find_program("twincache-gen")
    out = {}
    for cell in sel:
        d = cell_dir(root, cell)
        t0 = time.perf_counter()
        if is_real(cell):
            if not _build_real(d, cell, (sources or {}).get(cell["source"]["package"]), progress):
                continue
        else:
            cmd = [gen, "--out", d, "--threads", str(threads), "--quiet"] + gen_args(cell)
            p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
                raise SuiteError(f"cell {cell['name']}: twincache-gen exited {p.returncode}: {last}")
        with Cache(d) as c:
            got = c.worlds
        if got != cell_worlds(cell):
            raise SuiteError(f"cell {cell['name']}: {d} holds {got} worlds, the recipe's cell "
                             f"{cell_worlds(cell)} ones (built before under this name?): rm -rf {d} "
                             "and build again")
        dg = cache_digest(d)
        dt = time.perf_counter() - t0
        out[cell["name"]] = (dg, dt)
        want = cell.get("digest")
        if check and want and dg != want:
            raise SuiteError(f"cell {cell['name']}: digest {dg} but the recipe "
                             f"({recipe['_path']}) says {want}: this build differs from the "
                             "suite's (another generator?); rerun `twincache-suite digest "
                             "--update` only when the change is intended")
        if progress:
            verdict = ("no digest in recipe" if not want else "ok" if dg == want else
                       "DIFFERS (not checked)")
            progress(f"{cell['name']:28s} {cell['graphs']:5d} graphs {dt:6.2f} s {verdict}")
    return out


def _build_real(d, cell, where, progress):
    """A real cell's cache at d: kept when already built (the digest check
    follows), else imported. False (and one progress line) when the package
    is not installed and no file or folder was named."""
    if os.path.exists(d):
        return True
    src = cell["source"]
    if build_cell(d, cell, where) is None:
        if progress:
            progress(f"{cell['name']:28s} skipped: {src['package']} {src['version']} is not installed; "
                     f"name its wheel or folder (build --{src['package']} PATH; e.g. pip download "
                     f"{src['package']}=={src['version']} --no-deps) to build this cell")
        return False
    return True


def disk_bytes(root):
    """Bytes the files under root occupy on disk (allocated blocks: LMDB's
    data file is sparse up to its map size)."""
    return sum(os.stat(os.path.join(p, f)).st_blocks * 512 for p, _, fs in os.walk(root) for f in fs)


def cell_stats(root, cell):
    """var-/R2-sortability and the linear-fit share of a cell's cache, as
    `twincache-inspect stats --json` reports them."""
    p = subprocess.run([find_program("twincache-inspect"), "stats", "--json", cell_dir(root, cell)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SuiteError(f"cell {cell['name']}: twincache-inspect stats: "
                         f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    s = json.loads(p.stdout)
    sort = s.get("sortability", {})
    return {"var_sortability": sort.get("var"), "r2_sortability": sort.get("r2"),
            "linear_share": s.get("mechanism_fit", {}).get("linear_share"),
            "edge_density": s.get("edge_density")}


def check_built(root, cells):
    for c in cells:
        if not os.path.isdir(cell_dir(root, c)):
            raise SuiteError(f"cell {c['name']}: {cell_dir(root, c)} missing: "
                             f"twincache-suite build {root} --cells {c['name']}")
