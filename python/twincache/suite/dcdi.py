"""twincache.suite.dcdi — outside data: a folder in DCDI's layout (Brouillard
et al. 2020, dcdi/data.py; SEA and DCDI release theirs so; `twincache-inspect
export --format dcdi` writes it) read, checked and kept as a twincache cache of
observed data (FORMAT.md 3.11, twincache.write_cache: the loader, verify and
the fuzzers read it) that the baselines (and a predict function) score.
Stores written before, .npz files of this module's own, are still read."""
import os

import numpy as np

from .baseline import _to_numpy, baselines, graph_batch
from .errors import SuiteError
from .predictions import BAD_NPZ
from .scoring import evaluate

IMPORT_FORMAT = "twincache-suite dcdi-import v1"
DCDI_FILES = ("DAG{}.npy", "data_interv{}.npy", "intervention{}.csv", "regime{}.csv")


def _dcdi_dataset(src, dataset):
    """The i_dataset of the folder: `dataset`, or the one DAG{i}.npy there."""
    if dataset is not None:
        return int(dataset)
    found = sorted(int(f[3:-4]) for f in os.listdir(src)
                   if f.startswith("DAG") and f.endswith(".npy") and f[3:-4].isdigit())
    if not found:
        raise SuiteError(f"{src}: no DAG<i>.npy: not a DCDI folder (DAG<i>.npy, data_interv<i>.npy, "
                         "intervention<i>.csv, regime<i>.csv)")
    if len(found) > 1:
        raise SuiteError(f"{src}: datasets {', '.join(map(str, found))}: name one with --dataset")
    return found[0]


def _load_npy(path, what):
    try:
        x = np.load(path, allow_pickle=False)
    except BAD_NPZ as e:
        raise SuiteError(f"{path}: not a readable .npy file ({what}): {e}") from None
    if not isinstance(x, np.ndarray):
        x.close()
        raise SuiteError(f"{path}: not a readable .npy file ({what}): an .npz of several arrays")
    return x


def _csv_lines(path):
    try:
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteError(f"{path}: not a text file of comma-separated numbers: {e}") from None
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    return [ln.rstrip("\r") for ln in lines]


def _is_acyclic(adj):
    """Kahn's algorithm on adj[i, j] = edge i -> j."""
    indeg = adj.sum(axis=0).astype(np.int64)
    ready = list(np.nonzero(indeg == 0)[0])
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for j in np.nonzero(adj[i])[0]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return seen == len(adj)


def read_dcdi(src, dataset=None):
    """Reads and checks a DCDI folder (dataset i: DAG{i}.npy, data_interv{i}.npy,
    intervention{i}.csv, regime{i}.csv; data{i}.npy optional). Returns a dict:
    adj (N,N) uint8, base (S,N) float32 = the regime-0 rows, regimes (K,)
    the other regime numbers ascending, rows (K,) their row counts, inter
    (sum rows, N) float32 = their rows (world by world, file order within
    one), targets (K, T) int32 (-1 padded), obs (S0,N) float32 or None =
    data{i}.npy. Raises SuiteError naming the file, row or node for a
    missing file, shapes that disagree, NaN or infinity, a target out of
    range or differing within a regime, or a cyclic graph."""
    if not os.path.isdir(src):
        raise SuiteError(f"{src}: no such directory")
    i = _dcdi_dataset(src, dataset)
    paths = [os.path.join(src, f.format(i)) for f in DCDI_FILES]
    for p in paths:
        if not os.path.isfile(p):
            raise SuiteError(f"{src}: missing {os.path.basename(p)} (DCDI's layout for dataset {i}: "
                             + ", ".join(f.format(i) for f in DCDI_FILES) + ")")
    adj = _load_npy(paths[0], "the DAG")
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
        raise SuiteError(f"{paths[0]}: shape {adj.shape}: a square (N, N) adjacency expected")
    if adj.dtype.kind not in "biuf" or not np.all((adj == 0) | (adj == 1)):
        raise SuiteError(f"{paths[0]}: entries must be 0 or 1 (edge i -> j at [i][j])")
    adj = adj.astype(np.uint8)
    n = adj.shape[0]
    if np.any(np.diag(adj)):
        raise SuiteError(f"{paths[0]}: node {int(np.nonzero(np.diag(adj))[0][0])} has a self-loop: not a DAG")
    if not _is_acyclic(adj):
        raise SuiteError(f"{paths[0]}: the graph has a directed cycle: not a DAG")

    def rows_of(p, what):
        x = _load_npy(p, what)
        if x.ndim != 2 or x.shape[1] != n:
            raise SuiteError(f"{p}: shape {x.shape}, the DAG has {n} nodes: expected (rows, {n})")
        if x.dtype.kind != "f":
            raise SuiteError(f"{p}: dtype {x.dtype}: floating-point samples expected")
        bad = ~np.isfinite(x)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise SuiteError(f"{p}: row {r}, node {c} is {x[r, c]}: NaN or infinity")
        with np.errstate(over="ignore"):  # an overflow is an inf, refused below
            y = x.astype(np.float32)  # exact for float32 files; float64 ones are rounded
        bad = ~np.isfinite(y)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise SuiteError(f"{p}: row {r}, node {c} is {x[r, c]:.6g}: outside float32's range "
                             "(the store keeps float32)")
        return y

    data = rows_of(paths[1], "the samples")
    rows = data.shape[0]
    masks, regs = _csv_lines(paths[2]), _csv_lines(paths[3])
    for p, lines in ((paths[2], masks), (paths[3], regs)):
        if len(lines) != rows:
            raise SuiteError(f"{p}: {len(lines)} lines, {os.path.basename(paths[1])} has {rows} rows: "
                             "one line per row expected")
    targets, regime = [], np.empty(rows, dtype=np.int64)
    for r in range(rows):
        try:
            t = tuple(int(x) for x in masks[r].split(",")) if masks[r].strip() else ()
        except ValueError:
            raise SuiteError(f"{paths[2]}: line {r + 1}: {masks[r]!r}: comma-separated node indices "
                             "expected (empty: observational)") from None
        if any(x < 0 or x >= n for x in t):
            raise SuiteError(f"{paths[2]}: line {r + 1}: target outside the {n} nodes [0, {n - 1}]")
        targets.append(tuple(sorted(set(t))))
        try:
            regime[r] = int(float(regs[r]))
            if regime[r] != float(regs[r]) or regime[r] < 0:
                raise ValueError
        except (ValueError, OverflowError):  # int(float("inf")) overflows
            raise SuiteError(f"{paths[3]}: line {r + 1}: {regs[r]!r}: a regime number >= 0 "
                             "expected") from None
    sets = {}
    for r in range(rows):
        k = int(regime[r])
        if (k == 0) != (targets[r] == ()):
            raise SuiteError(f"{paths[2]}: line {r + 1}: regime {k} with targets {list(targets[r])}: "
                             "regime 0 is the observational one (no target), every other has targets")
        if sets.setdefault(k, targets[r]) != targets[r]:
            raise SuiteError(f"{paths[2]}: line {r + 1}: targets {list(targets[r])}, earlier rows of "
                             f"regime {k} have {list(sets[k])}: one target set per regime")
    if 0 not in sets:
        raise SuiteError(f"{paths[3]}: no regime 0: the observational rows are the base world")
    ks = sorted(k for k in sets if k)
    t_max = max([len(sets[k]) for k in ks] or [1])
    tg = np.full((len(ks), t_max), -1, dtype=np.int32)
    for w, k in enumerate(ks):
        tg[w, :len(sets[k])] = sets[k]
    obs_path = os.path.join(src, f"data{i}.npy")
    obs = rows_of(obs_path, "the observational samples") if os.path.isfile(obs_path) else None
    return {"adj": adj, "base": data[regime == 0],
            "regimes": np.array(ks, dtype=np.int64),
            "rows": np.array([(regime == k).sum() for k in ks], dtype=np.int64),
            "inter": (np.concatenate([data[regime == k] for k in ks]) if ks
                      else np.zeros((0, n), np.float32)),
            "targets": tg, "obs": obs, "dataset": i}


def import_dcdi(src, out, dataset=None):
    """Writes the store of a DCDI folder (read_dcdi) to `out`, a new twincache
    cache of observed data (an existing path is refused): graph 0 the
    regimes (observational first, each its own rows), its targets and DAG;
    graph 1, when the folder has data{i}.npy, those observational rows alone.
    The regime numbers are kept in the config's "source". Returns read_dcdi's
    dict."""
    import twincache
    d = read_dcdi(src, dataset)
    if os.path.exists(out):
        raise SuiteError(f"{out}: exists: refusing to overwrite")
    rows = np.cumsum(d["rows"])[:-1] if len(d["rows"]) else []
    inter = np.split(d["inter"], rows) if len(d["rows"]) else []
    sets = [{"regimes": [d["base"], *inter], "graph": d["adj"],
             "targets": [[]] + [[int(x) for x in t[t >= 0]] for t in d["targets"]]}]
    if d["obs"] is not None:
        sets.append({"regimes": [d["obs"]], "graph": d["adj"], "targets": [[]]})
    source = {"from": "dcdi", "dataset": int(d["dataset"]), "regimes": [int(k) for k in d["regimes"]],
              "obs": d["obs"] is not None, "importer": IMPORT_FORMAT}
    try:
        twincache.write_cache(out, sets, source=source)
    except twincache.Error as e:
        raise SuiteError(f"{out}: cannot write: {e}") from None
    return d


def _load_cache(path):
    """An import cache (import_dcdi, twincache-import, write_cache) as
    read_dcdi's dict: graph 0's regimes; obs from graph 1 when import_dcdi
    stored data{i}.npy there."""
    import twincache
    try:
        with twincache.Cache(path) as c:
            if c.worlds != "observed":
                raise SuiteError(f"{path}: a cache of {c.worlds} worlds, not an import (twincache-suite "
                                 "import-dcdi, twincache-import): score it with score")
            src = c.config.get("source") if isinstance(c.config.get("source"), dict) else {}
            g = c[0]
            obs = c[1].base[:int(c[1].rows[0])] if src.get("obs") and len(c) > 1 else None
    except twincache.Error as e:
        raise SuiteError(f"{path}: not a readable import cache: {e}") from None
    if not g.graph_known:
        raise SuiteError(f"{path}: its graph is unknown (imported without one): nothing to score against")
    if not g.targets_known:
        raise SuiteError(f"{path}: its regimes' targets are withheld: score-import needs them")
    held = np.asarray(g.rows, dtype=np.int64)
    k = g.n_inter
    regimes = src.get("regimes") if isinstance(src.get("regimes"), list) and len(src["regimes"]) == k else \
        list(range(1, k + 1))
    t_max = max([len(t) for t in g.target_sets] or [1])
    tg = np.full((k, t_max), -1, dtype=np.int32)
    for w, t in enumerate(g.target_sets):
        tg[w, :len(t)] = t
    return {"adj": g.adj.astype(np.uint8), "base": g.base[:held[0]].copy(),
            "regimes": np.array(regimes, dtype=np.int64), "rows": held[1:].copy(),
            "inter": (np.concatenate([g.inter[w][:held[w + 1]] for w in range(k)]) if k
                      else np.zeros((0, g.n_nodes), np.float32)),
            "targets": tg, "obs": obs, "dataset": src.get("dataset")}


def load_import(path):
    """The store import_dcdi wrote, as read_dcdi's dict (obs None when
    absent): a cache of observed data (a directory), or an .npz store of
    before, checked as read_dcdi checks a folder (the store may come from
    elsewhere): SuiteError names the array that is missing or wrong."""
    if os.path.isdir(path):
        return _load_cache(path)
    try:
        z = np.load(path, allow_pickle=False)
    except BAD_NPZ as e:
        raise SuiteError(f"{path}: not a readable import store: {e}") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise SuiteError(f"{path}: not a readable import store: a single .npy array, not an .npz")
    with z:
        try:
            if "format" not in z.files or str(z["format"]) != IMPORT_FORMAT:
                raise SuiteError(f"{path}: not a '{IMPORT_FORMAT}' store (twincache-suite import-dcdi)")
            d = {k: z[k] for k in z.files if k != "format"}
        except BAD_NPZ as e:
            raise SuiteError(f"{path}: not a readable import store: {e}") from None
    d.setdefault("obs", None)
    _check_store(path, d)
    return d


def _check_store(path, d):
    """The arrays of a store, as import_dcdi writes them: adj (N,N) 0/1 DAG,
    base (S,N) S >= 1, regimes (K,), rows (K,) >= 1 summing to inter's rows,
    inter (sum rows, N), targets (K,T) in [-1, N) with one target a world,
    obs (S0,N) or None; floats finite."""
    for k in ("adj", "base", "regimes", "rows", "inter", "targets"):
        if k not in d:
            raise SuiteError(f"{path}: no '{k}' array: not a complete import store")

    def bad(k, what):
        return SuiteError(f"{path}: '{k}' {d[k].dtype} {d[k].shape}: {what}")
    adj = d["adj"]
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
        raise bad("adj", "a square (N, N) adjacency expected")
    if adj.dtype.kind not in "biuf" or not np.all((adj == 0) | (adj == 1)):
        raise bad("adj", "entries must be 0 or 1")
    if np.any(np.diag(adj)) or not _is_acyclic(adj.astype(np.uint8)):
        raise bad("adj", "a self-loop or a directed cycle: not a DAG")
    n = adj.shape[0]
    for k in ("base", "inter", "obs"):
        x = d[k]
        if x is None:
            continue
        if x.ndim != 2 or x.shape[1] != n or x.dtype.kind != "f":
            raise bad(k, f"float rows of the {n} nodes expected, (rows, {n})")
        if not np.all(np.isfinite(x)):
            raise bad(k, "NaN or infinity")
    if len(d["base"]) < 1:
        raise bad("base", "no rows: the base world is empty")
    rows, K = d["rows"], len(d["rows"]) if d["rows"].ndim == 1 else -1
    if K < 0 or rows.dtype.kind not in "iu" or np.any(rows < 1):
        raise bad("rows", "one row count >= 1 per regime expected")
    if int(rows.sum()) != len(d["inter"]):
        raise bad("rows", f"they sum to {int(rows.sum())}, 'inter' holds {len(d['inter'])} rows")
    if d["regimes"].shape != (K,) or d["regimes"].dtype.kind not in "iu":
        raise bad("regimes", f"one regime number per row count ({K}) expected")
    t = d["targets"]
    if t.ndim != 2 or t.shape[0] != K or t.dtype.kind not in "iu":
        raise bad("targets", f"({K}, T) node indices expected, -1 padded")
    if t.size and (t.min() < -1 or t.max() >= n):
        raise bad("targets", f"a target outside the {n} nodes")
    if K and not np.all((t >= 0).any(axis=1)):
        raise bad("targets", "a regime without a target")


def _store_batch(d, withhold_targets=False):
    """The store's graph as graph_batch: its regimes are twin worlds (inter
    (K,S,N)) only where every one has the base world's S rows; the second
    value says whether they do."""
    n, S = d["adj"].shape[0], d["base"].shape[0]
    K = len(d["rows"])
    paired = K > 0 and bool(np.all(d["rows"] == S))  # twin-style worlds: S rows each
    k = K if paired else 0
    tmask = np.zeros((k, n), dtype=np.uint8)
    if not withhold_targets:
        for w in range(k):
            t = d["targets"][w]
            tmask[w, t[t >= 0]] = 1
    inter = d["inter"].reshape(k, S, n) if paired else None
    return graph_batch(d["base"], inter, tmask, d["adj"]), paired


def score_import(path, predict=None, name="model", with_baselines=True, progress=print):
    """Scores an imported graph (load_import): predict(batch) -> (1, N, N)
    (a twincache.Batch, as score's: graph_batch) and/or the
    baselines. Returns {model: evaluate()'s dict}; |T| only where every
    regime has the base world's row count (its rows read as twin worlds):
    where it is left out, progress (None: silent) gets one line saying why."""
    d = load_import(path)
    adj = d["adj"]
    n = len(adj)
    b, paired = _store_batch(d)
    dens = float(adj.sum() / max(n * (n - 1), 1))
    models = {name: predict} if predict is not None else {}
    if with_baselines and len(d["base"]) < 2:
        raise SuiteError(f"{path}: the base world holds {len(d['base'])} row: the baselines "
                         "(variances, correlations) need 2 or more")
    if with_baselines:
        models.update(baselines(dens))
        if not paired:
            models.pop("twin-T")
            if progress:
                progress(f"twin-T: not scored: its regimes hold {_counts(d['rows'])} rows, the base "
                         f"world {len(d['base'])}: they are no twin worlds of its rows")
    cell = {"name": os.path.basename(path)}
    out = {}
    for m, f in models.items():
        try:
            p = _to_numpy(f(b))
        except np.linalg.LinAlgError as e:
            raise SuiteError(f"{path}: {m} failed on this graph's rows: {e}") from None
        if p.shape != (1, n, n):
            raise SuiteError(f"{path}: {m} returned shape {tuple(p.shape)}, expected (1, {n}, {n})")
        out[m] = evaluate({0: np.asarray(p[0], np.float64)}, None, cell, gt=[(adj, None)])
    return out


def _counts(rows):
    """The distinct row counts of the regimes, for a message: '32', '32, 48'."""
    u = sorted(set(int(r) for r in rows))
    return ", ".join(map(str, u[:5])) + (", ..." if len(u) > 5 else "")
