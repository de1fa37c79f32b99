"""twincache.suite.real — cells of real data that a package on the index ships
(suite/SUITE.md, "Real data"): the recipe pins the source files by sha256,
the build reads them from a wheel file, an installed package or a folder the
user names (nothing is downloaded), writes the rows as an observed cache
without a graph (FORMAT.md 3.11: NO_DAG) and the scorer takes the truth from
the recipe's edge list, as published: it may hold a cycle (Sachs does), which
no stored graph may (a cache's graph is a DAG).

A real cell in a recipe:
  {"name": ..., "axis": "real", "graphs": 1,
   "source": {"package": "cdt", "version": "0.6.0",
              "data": {"path": "cdt/data/resources/x.csv", "sha256": ...},
              "truth": {"path": "cdt/data/resources/y.csv", "sha256": ...}},
   "columns": [the data file's header, in order], "rows": R,
   "edges": [[cause, effect], ...] (the truth file's, in its order),
   "transform": "none", "digest": ...}"""
import hashlib
import importlib.util
import os
import zipfile

import numpy as np

from .errors import SuiteError

TRANSFORMS = ("none",)


def is_real(cell):
    return "source" in cell


def check_cell(cell, path):
    """Raises SuiteError naming the recipe file and the field when a real
    cell is malformed."""
    name = cell.get("name", "?")

    def bad(what):
        raise SuiteError(f"recipe {path}: real cell {name}: {what}")
    src = cell.get("source")
    if not isinstance(src, dict) or not isinstance(src.get("package"), str) or \
            not isinstance(src.get("version"), str):
        bad("'source' must be an object with package and version strings")
    for k in ("data", "truth"):
        f = src.get(k)
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or \
                not isinstance(f.get("sha256"), str) or len(f["sha256"]) != 64:
            bad(f"source.{k} must be an object with path and a 64-hex-digit sha256")
    cols = cell.get("columns")
    if not isinstance(cols, list) or len(cols) < 2 or len(set(cols)) != len(cols) or \
            not all(isinstance(c, str) and c for c in cols):
        bad("'columns' must list 2 or more distinct names")
    edges = cell.get("edges")
    if not isinstance(edges, list) or not all(
            isinstance(e, list) and len(e) == 2 and e[0] in cols and e[1] in cols and e[0] != e[1]
            for e in edges) or len({tuple(e) for e in edges}) != len(edges):
        bad("'edges' must list distinct [cause, effect] pairs of two different columns")
    if cell.get("graphs") != 1 or not isinstance(cell.get("rows"), int) or cell["rows"] < 2:
        bad("graphs must be 1 and rows an int >= 2")
    if cell.get("transform", "none") not in TRANSFORMS:
        bad(f"transform must be one of {', '.join(TRANSFORMS)}")


def truth_adj(cell):
    """(n,n) uint8, adj[i,j] = 1 <=> the recipe's edge columns[i] -> columns[j]."""
    idx = {c: i for i, c in enumerate(cell["columns"])}
    a = np.zeros((len(idx), len(idx)), dtype=np.uint8)
    for x, y in cell["edges"]:
        a[idx[x], idx[y]] = 1
    return a


def _reader(where, package):
    """A function relpath -> bytes over `where`: a wheel (.whl, a zip), a
    folder holding the package folder (site-packages), or the package folder
    itself; None: the installed package, found without importing it."""
    if where is None:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            return None, None
        where = os.path.dirname(list(spec.submodule_search_locations)[0])
    if os.path.isfile(where):
        try:
            z = zipfile.ZipFile(where)
        except (OSError, zipfile.BadZipFile) as e:
            raise SuiteError(f"{where}: not a wheel (zip) file: {e}") from None

        def read_zip(rel):
            try:
                return z.read(rel)
            except KeyError:
                raise SuiteError(f"{where}: holds no {rel}") from None
        return read_zip, where
    if not os.path.isdir(where):
        raise SuiteError(f"{where}: no such wheel file or folder")
    root = where
    if os.path.basename(os.path.normpath(where)) == package and \
            not os.path.isdir(os.path.join(where, package)):
        root = os.path.dirname(os.path.normpath(where))  # the package folder itself

    def read_dir(rel):
        p = os.path.join(root, *rel.split("/"))
        try:
            with open(p, "rb") as f:
                return f.read()
        except OSError as e:
            raise SuiteError(f"{p}: cannot read: {e.strerror}") from None
    return read_dir, where


def read_source(cell, where=None):
    """The pinned files of a real cell, checked: (rows (R, n) float32 in the
    recipe's column order, where they were read). Raises SuiteError for a
    hash that differs (naming file, expected and found), a header or edge
    list other than the recipe's, a row count other than its rows, a value
    that is not a finite number. Returns (None, None) when where is None
    and the package is not installed."""
    src = cell["source"]
    read, found = _reader(where, src["package"])
    if read is None:
        return None, None
    blobs = {}
    for k in ("data", "truth"):
        b = read(src[k]["path"])
        h = hashlib.sha256(b).hexdigest()
        if h != src[k]["sha256"]:
            raise SuiteError(f"cell {cell['name']}: {src[k]['path']} in {found} has sha256 {h}, the "
                             f"recipe pins {src[k]['sha256']} ({src['package']} {src['version']}): "
                             "another version or a modified file")
        blobs[k] = b.decode("utf-8")
    lines = blobs["data"].splitlines()
    head = [c.strip().strip('"') for c in lines[0].split(",")]
    if head != cell["columns"]:
        raise SuiteError(f"cell {cell['name']}: {src['data']['path']}: header {head}, the recipe's "
                         f"columns {cell['columns']}")
    rows = [ln for ln in lines[1:] if ln.strip()]
    if len(rows) != cell["rows"]:
        raise SuiteError(f"cell {cell['name']}: {src['data']['path']}: {len(rows)} rows, the recipe "
                         f"says {cell['rows']}")
    X = np.empty((len(rows), len(head)), dtype=np.float32)
    for r, ln in enumerate(rows):
        vals = ln.split(",")
        if len(vals) != len(head):
            raise SuiteError(f"cell {cell['name']}: {src['data']['path']}: row {r + 2} has "
                             f"{len(vals)} values, not {len(head)}")
        try:
            X[r] = [float(v) for v in vals]
        except ValueError:
            raise SuiteError(f"cell {cell['name']}: {src['data']['path']}: row {r + 2}: not a "
                             "number") from None
    if not np.all(np.isfinite(X)):
        raise SuiteError(f"cell {cell['name']}: {src['data']['path']}: a value is not finite")
    edges = [[c.strip().strip('"') for c in ln.split(",")] for ln in blobs["truth"].splitlines()[1:]
             if ln.strip()]
    if edges != cell["edges"]:
        raise SuiteError(f"cell {cell['name']}: {src['truth']['path']}: its {len(edges)} edges are "
                         f"not the recipe's {len(cell['edges'])}")
    return X, found


def build_cell(d, cell, where=None):
    """Writes a real cell's cache at d (which must not exist) from its
    source; returns where the files were read, or None (not installed)."""
    from ..write import write_cache
    X, found = read_source(cell, where)
    if X is None:
        return None
    src = cell["source"]
    write_cache(d, {"regimes": [X]}, source={"package": src["package"], "version": src["version"],
                                             "file": src["data"]["path"],
                                             "sha256": src["data"]["sha256"]})
    return found
