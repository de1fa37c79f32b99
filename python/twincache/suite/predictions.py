"""twincache.suite.predictions — the predictions file: an .npz of one (n,n)
array per graph under '<cell>/<graph id>', and the suite it is for."""
import numpy as np

from .errors import SuiteError
from .recipe import load_recipe, suite_id


def read_predictions(path, recipe):
    """The predictions file: an .npz with key 'suite' = 'twincache-suite vV'
    and one (n,n) float array per graph, key '<cell>/<graph id>'. Returns
    {cell: {gid: array}}; SuiteError names what is wrong."""
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SuiteError(f"{path}: not a readable .npz predictions file: {e}") from None
    with z:
        keys = list(z.keys())
        if "suite" not in keys:
            raise SuiteError(f"{path}: no 'suite' key (expected '{suite_id(recipe)}')")
        sid = str(z["suite"])
        if sid != suite_id(recipe):
            raise SuiteError(f"{path}: predictions for '{sid}', this suite is '{suite_id(recipe)}'")
        names = {c["name"] for c in recipe["cells"]}
        out = {}
        for k in keys:
            if k == "suite":
                continue
            cell, _, gid = k.partition("/")
            if cell not in names:
                raise SuiteError(f"{path}: key {k!r}: no cell {cell!r} in {suite_id(recipe)}")
            if not gid.isdigit():
                raise SuiteError(f"{path}: key {k!r}: expected '<cell>/<graph id>'")
            a = z[k]
            if a.ndim != 2 or a.dtype.kind not in "fiu":
                raise SuiteError(f"{path}: key {k!r}: a 2-D numeric array expected, got "
                                 f"{a.dtype} {a.shape}")
            out.setdefault(cell, {})[int(gid)] = a.astype(np.float64)
    return out


def write_predictions(path, preds, recipe=None):
    """Writes {cell: {gid: (n,n)}} as the predictions file read_predictions reads."""
    recipe = recipe or load_recipe()
    arrays = {"suite": np.array(suite_id(recipe))}
    for cell, d in preds.items():
        for gid, a in d.items():
            arrays[f"{cell}/{gid}"] = np.asarray(a, dtype=np.float32)
    np.savez_compressed(path, **arrays)
