"""twincache.suite.recipe — the recipe file (cells: twincache-gen options,
seed, graph count, digest), the cell's directory, and the digest of a
cache's decoded content that proves a cell was built as the recipe says.

Digest: sha256 over the decoded content of every graph in index order (sizes,
names, flags, adjacency, SCM parameters, every world's samples, interventions:
see _graph_digest_parts), so it does not depend on thread count, LMDB's page
layout or zstd's compressed bytes. A cell's worlds (twin or independent,
the generator's --worlds) are in it too: the graph flags hold INDEPENDENT.

A cell's `worlds` field ("twin", the default when absent, or
"independent") is passed to twincache-gen as --worlds; a twin cell's
command is the one it was before the field existed (no --worlds flag), so
v1's digests do not move."""
import hashlib
import json
import os
import re

import numpy as np

from ..cache import Cache
from .errors import SuiteError, UnknownCell

SUITE_NAME = "twincache-suite"
DEFAULT_VERSION = 1
WORLDS = ("twin", "independent")  # a cell's "worlds"; absent = twin


def recipe_path(version=DEFAULT_VERSION):
    """The recipe file of a suite version: the wheel's copy, else the source tree's."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the twincache package
    for cand in (os.path.join(here, "suites", f"v{version}.json"),
                 os.path.join(here, "..", "..", "suite", f"v{version}.json")):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    raise SuiteError(f"suite version {version}: no recipe v{version}.json next to {here} "
                     "(twincache/suites/) nor in the source tree's suite/")


def load_recipe(path=None):
    """The recipe as a dict, checked: a JSON object with suite, version and a
    list of cells, each an object with a unique name (no '/'), options (an
    object), seed (int >= 0), graphs (int >= 1), digest (a string) when
    present; splits name known cells. SuiteError names the file and what is
    wrong. `path` None is the package's v1.json; "v2" (no such file here) the
    package's v2.json, so an installed wheel's user need not find it."""
    if path is None:
        path = recipe_path()
    elif re.fullmatch(r"v[0-9]+", path) and not os.path.exists(path):  # a shipped version by name
        path = recipe_path(int(path[1:]))
    try:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
    except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
        raise SuiteError(f"recipe {path}: {e}") from None
    if not isinstance(r, dict) or r.get("suite") != SUITE_NAME or \
            not _is_int(r.get("version")):
        raise SuiteError(f"recipe {path}: not a {SUITE_NAME} recipe (a JSON object with keys "
                         "suite, version, cells)")
    cells, splits = r.get("cells", []), r.get("splits", {})
    if not isinstance(cells, list) or not isinstance(splits, dict):
        raise SuiteError(f"recipe {path}: 'cells' must be a list and 'splits' an object")
    seen = set()
    for c in cells:
        if not isinstance(c, dict):
            raise SuiteError(f"recipe {path}: cell {c!r:.40} is not an object")
        real = "source" in c  # real data a package ships (real.py): no options, no seed
        for k in ("name", "graphs") if real else ("name", "options", "seed", "graphs"):
            if k not in c:
                raise SuiteError(f"recipe {path}: cell {c.get('name', '?')} lacks '{k}'")
        if not isinstance(c["name"], str) or not c["name"] or c["name"] in seen or "/" in c["name"]:
            raise SuiteError(f"recipe {path}: cell name {c['name']!r} twice, empty, not a string "
                             "or with '/'")
        if real:
            from .real import check_cell
            check_cell(c, path)
            if not isinstance(c.get("digest", ""), str):
                raise SuiteError(f"recipe {path}: cell {c['name']}: digest must be a string")
            seen.add(c["name"])
            continue
        ok = (isinstance(c["options"], dict) and _is_int(c["seed"]) and c["seed"] >= 0
              and _is_int(c["graphs"]) and c["graphs"] >= 1
              and isinstance(c.get("digest", ""), str))
        if not ok:
            raise SuiteError(f"recipe {path}: cell {c['name']}: options must be an object, seed an "
                             "int >= 0, graphs an int >= 1, digest a string")
        if c.get("worlds", "twin") not in WORLDS or "worlds" in c["options"]:
            raise SuiteError(f"recipe {path}: cell {c['name']}: worlds must be one of "
                             f"{', '.join(WORLDS)}, given as the cell's 'worlds' field (not an option); "
                             f"got {c.get('worlds', c['options'].get('worlds'))!r}")
        seen.add(c["name"])
    for split, sp in splits.items():
        test = sp.get("test", []) if isinstance(sp, dict) else None
        if not isinstance(test, list):
            raise SuiteError(f"recipe {path}: split {split} must be an object with a 'test' list")
        for name in test:
            if name not in seen:
                raise SuiteError(f"recipe {path}: split {split} names unknown cell {name}")
    r["_path"] = path
    return r


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def select_cells(recipe, cells=None):
    """The recipe's cells named by `cells` (None: all; a list or 'a,b' string)."""
    if cells is None:
        return list(recipe["cells"])
    named = cells
    if isinstance(cells, str):
        cells = [c for c in cells.split(",") if c]
    by = {c["name"]: c for c in recipe["cells"]}
    if not cells:
        raise UnknownCell(f"cells {named!r} names no cell; the suite's cells: {', '.join(by)}")
    bad = [c for c in cells if c not in by]
    if bad:
        raise UnknownCell(f"unknown cell(s) {', '.join(bad)}; the suite's cells: "
                         f"{', '.join(by)}")
    return [by[c] for c in cells]


def suite_id(recipe):
    return f"{SUITE_NAME} v{recipe['version']}"


def cell_worlds(cell):
    """"twin" or "independent": the cell's worlds (absent: twin); "observed"
    for a real cell (real.py)."""
    if "source" in cell:
        return "observed"
    return cell.get("worlds", "twin")


def gen_args(cell):
    """twincache-gen flags of a cell (options dict -> --flag value; an
    independent cell adds --worlds independent, a twin cell adds nothing).
    A real cell has none: SuiteError."""
    if "source" in cell:
        raise SuiteError(f"cell {cell['name']}: real data ({cell['source']['package']} "
                         f"{cell['source']['version']}), not generated: no twincache-gen flags")
    args = ["--seed", str(cell["seed"]), "--graphs", str(cell["graphs"])]
    if cell_worlds(cell) == "independent":
        args += ["--worlds", "independent"]
    for k, v in cell["options"].items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        elif isinstance(v, list):
            args += [flag, ":".join(str(x) for x in v)]
        else:
            args += [flag, str(v)]
    return args


def _graph_digest_parts(g):
    """The decoded content of one graph, in a fixed order."""
    head = [g.n_nodes, g.n_samples, g.n_inter, g.n_hidden, g.flags]
    yield ("|".join(map(str, head)) + f"|{g.mechanism}|{g.noise}|{g.family}|"
           f"{','.join(g.node_mechanisms or ())}").encode()
    for a in (g.adj, g.weight, g.noise_scale, g.mlp, g.norm_mean, g.norm_std, g.base, g.inter,
              g.target, g.kind, g.value, g.soft):
        if a is None:
            yield b"-"
        else:
            a = np.ascontiguousarray(a)
            yield f"{a.dtype.str}{a.shape}".encode()
            yield a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    for sets in (g.target_sets, g.value_sets):
        for s in sets or ():
            yield np.ascontiguousarray(s).astype(np.float64).tobytes() + b";"
    rows = getattr(g, "rows", None)
    if rows is not None and np.any(np.asarray(rows) != g.n_samples):
        # rows per world (FORMAT.md 3.10), only where a world holds fewer
        # than S: a cache without counts keeps the digest it had before
        yield b"rows" + np.ascontiguousarray(rows).astype("<i8").tobytes()


def cache_digest(path, visit=None):
    """sha256 of a cache's decoded content: 'sha256:' + 64 hex digits.
    visit(graph), when given, sees every graph of the same pass in index
    order (scoring reads the ground truth there)."""
    h = hashlib.sha256()
    with Cache(path) as c:
        h.update(f"graphs={len(c)}".encode())
        for i in range(len(c)):
            g = c[i]
            for part in _graph_digest_parts(g):
                h.update(part)
            if visit is not None:
                visit(g)
    return "sha256:" + h.hexdigest()


def check_cell_digest(root, cell, digest):
    """Raises SuiteError unless `digest` (of root/<cell>) is the recipe's
    digest of the cell: a cell regenerated with another seed, cut to fewer
    graphs, or another cell's directory under this name is refused."""
    d = cell_dir(root, cell)
    want = cell.get("digest")
    if not want:
        raise SuiteError(f"cell {cell['name']}: the recipe holds no digest to check {d} against "
                         "(twincache-suite digest DIR --update writes it)")
    if digest != want:
        raise SuiteError(f"cell {cell['name']}: {d} is not the recipe's cell: its digest "
                         f"{digest[:19]}... differs from the recipe's {want[:19]}... (another seed, "
                         f"graph count or cell?): rebuild it (rm -rf {d}; twincache-suite build "
                         f"{root} --cells {cell['name']})")


def cell_dir(root, cell):
    return os.path.join(root, cell["name"])


def update_digests(root, cells=None, recipe=None):
    """Rewrites the recipe's digests from the caches under root (built
    before); returns the names whose digest changed."""
    recipe = recipe or load_recipe()
    changed = []
    for cell in select_cells(recipe, cells):
        d = cell_dir(root, cell)
        if not os.path.isdir(d):
            raise SuiteError(f"cell {cell['name']}: {d} missing: build it first")
        dg = cache_digest(d)
        if cell.get("digest") != dg:
            changed.append(cell["name"])
            cell["digest"] = dg
    path = recipe["_path"]
    body = {k: v for k, v in recipe.items() if not k.startswith("_")}
    with open(path + ".tmp", "w") as f:
        f.write(dump_recipe(body))
    os.replace(path + ".tmp", path)
    return changed


def dump_recipe(r):
    """The recipe's text: one cell per line, so a diff shows which cell changed."""
    lines = ["{"]
    for k, v in r.items():
        if k == "cells":
            lines.append('  "cells": [')
            for i, c in enumerate(v):
                lines.append("    " + json.dumps(c) + ("," if i + 1 < len(v) else ""))
            lines.append("  ],")
        else:
            lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    lines[-1] = lines[-1].rstrip(",")
    lines.append("}")
    return "\n".join(lines) + "\n"
