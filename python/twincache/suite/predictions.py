"""twincache.suite.predictions — the predictions file: an .npz of one (n,n)
array per graph under '<cell>/<graph id>', and the suite it is for. Its
bytes come from outside: every way they can be wrong is one SuiteError
naming the file and the key."""
import os
import re
import warnings
import zipfile
import zlib

import numpy as np

from .errors import SuiteError
from .recipe import load_recipe, suite_id

# what numpy's .npz reader raises on bytes that are no (complete) zip of .npy
# arrays: truncated, bit-flipped, pickled objects, an unknown compression
BAD_NPZ = (OSError, ValueError, EOFError, KeyError, NotImplementedError, RuntimeError,
           zipfile.BadZipFile, zlib.error)

# the one key of graph i: decimal, ASCII digits, no leading zero ('3', not
# '003', '٣' or '²', which int() would all read as 3)
_GRAPH_ID = re.compile(r"0|[1-9][0-9]*")


def read_predictions(path, recipe=None):
    """The predictions file at `path`: an .npz with key 'suite' =
    'twincache-suite vV' and one (n,n) numeric array per graph under the key
    '<cell>/<graph id>', the id a decimal integer in ASCII digits without
    leading zeros, below the cell's graph count. recipe: the suite the file
    must be for (load_recipe()'s dict; None: the package's recipe), its
    version and cells checked. Returns {cell: {gid: (n,n) float64}}. Raises
    SuiteError naming the file and key: not an .npz (truncated, damaged, a
    .npy, pickled objects), no or another 'suite', a cell the recipe lacks,
    a key that is not the graph's one key, an id out of the cell's range, an
    array that is not 2-D numeric. Shapes and values are checked when scored."""
    recipe = recipe or load_recipe()
    sid_want = suite_id(recipe)
    try:
        z = np.load(path, allow_pickle=False)
    except BAD_NPZ as e:
        raise SuiteError(f"{path}: not a readable .npz predictions file: {e}") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise SuiteError(f"{path}: not a readable .npz predictions file: a single .npy array, "
                         "not an .npz of one array per graph")
    with z:
        keys = list(z.keys())
        if len(set(keys)) != len(keys):
            twice = sorted(k for k in set(keys) if keys.count(k) > 1)
            raise SuiteError(f"{path}: key {twice[0]!r} twice: one array per graph")
        if "suite" not in keys:
            raise SuiteError(f"{path}: no 'suite' key (expected '{sid_want}')")
        sid = str(_array(z, "suite", path))
        if sid != sid_want:
            raise SuiteError(f"{path}: predictions for '{sid}', this suite is '{sid_want}'")
        graphs = {c["name"]: c["graphs"] for c in recipe["cells"]}
        out = {}
        for k in keys:
            if k == "suite":
                continue
            cell, _, gid = k.partition("/")
            if cell not in graphs:
                raise SuiteError(f"{path}: key {k!r}: no cell {cell!r} in {sid_want}")
            if not _GRAPH_ID.fullmatch(gid):
                raise SuiteError(f"{path}: key {k!r}: expected '<cell>/<graph id>', the id in "
                                 "ASCII digits without leading zeros (graph 3 is '<cell>/3')")
            i = int(gid)
            if i >= graphs[cell]:
                raise SuiteError(f"{path}: key {k!r}: cell {cell} has graphs 0 to "
                                 f"{graphs[cell] - 1}")
            a = _array(z, k, path)
            if a.ndim != 2 or a.dtype.kind not in "fiu":
                raise SuiteError(f"{path}: key {k!r}: a 2-D numeric array expected, got "
                                 f"{a.dtype} {a.shape}")
            out.setdefault(cell, {})[i] = a.astype(np.float64)
    return out


def _array(z, key, path):
    try:
        return z[key]
    except BAD_NPZ as e:
        raise SuiteError(f"{path}: key {key!r}: not a readable array: {e}") from None


def write_predictions(preds, path, recipe=None):
    """Writes preds, {cell: {gid: (n,n)}}, to `path` as the predictions file
    read_predictions reads (float32; the suite of `recipe`, None: the
    package's). The data first, then where, as write_report(report, prefix);
    the former order write_predictions(path, preds) still works and warns
    (DeprecationWarning)."""
    if isinstance(preds, (str, bytes, os.PathLike)) and isinstance(path, dict):
        warnings.warn("write_predictions(path, preds) is deprecated: write_predictions(preds, path)",
                      DeprecationWarning, stacklevel=2)
        preds, path = path, preds
    recipe = recipe or load_recipe()
    arrays = {"suite": np.array(suite_id(recipe))}
    for cell, d in preds.items():
        for gid, a in d.items():
            arrays[f"{cell}/{gid}"] = np.asarray(a, dtype=np.float32)
    np.savez_compressed(path, **arrays)
