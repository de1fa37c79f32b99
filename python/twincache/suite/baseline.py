"""twincache.suite.baseline — the baselines every report scores (chance,
var-sort, R2-sort, |corr|, |T|): predict functions over a batch, numpy only,
reading nothing but what a model sees (base and twin worlds, targets unless
withheld), and graph_batch: one graph's arrays as the batch type every
predict function gets."""
import numpy as np

from ..batch import Batch

BASELINES = ("chance", "var-sort", "r2-sort", "corr", "twin-T")


def _to_numpy(x):
    if hasattr(x, "detach"):  # a torch tensor, on any device
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _field(batch, name):
    v = batch.numpy.get(name) if batch.numpy else None
    return np.asarray(v) if v is not None else _to_numpy(batch[name])


def graph_batch(base, inter=None, target=None, adj=None, rows=None):
    """One graph as a twincache.Batch (output numpy, G = 1, K worlds, S rows,
    n nodes; no slot behind it): base (S,n), inter (K,S,n) or None (K = 0),
    target (K,n) 0/1 or None (all 0: withheld), adj (n,n) or None (all 0).
    value and kind are 0 (the worlds' kinds are not known); rows (K+1,) the
    rows each world holds (None: S each; rows past a count are not read).
    What score_import hands predict, the same type as score's Loader batches."""
    base = np.asarray(base, np.float32)
    S, n = base.shape
    inter = np.zeros((0, S, n), np.float32) if inter is None else np.asarray(inter, np.float32)
    K = inter.shape[0]
    target = np.zeros((K, n), np.uint8) if target is None else np.asarray(target, np.uint8)
    adj = np.zeros((n, n), np.uint8) if adj is None else np.asarray(adj, np.uint8)
    f = {"base": base[None], "inter": inter[None], "target": target[None],
         "value": np.zeros((1, K, n), np.float32), "kind": np.zeros((1, K), np.uint8),
         "adj": adj[None], "node_mask": np.ones((1, n), np.uint8),
         "int_mask": np.ones((1, K), np.uint8), "graph_id": np.zeros(1, np.uint64),
         "valid": np.ones(1, np.uint8),
         "rows": (np.full((1, K + 1), S, np.uint32) if rows is None
                  else np.asarray(rows, np.uint32).reshape(1, K + 1))}
    b = Batch(f, f, 0, 0, 1, None, 0, {})
    b._output, b.nodes = "numpy", n
    return b


def _graphs(batch):
    """(g, n, base (r_0,n) float64, inter, targets (K,n) bool) for every
    valid graph of a batch, reading only the rows each world holds (the
    batch's rows array, FORMAT.md 3.10; a batch without one: S each). inter
    is (K,S,n) when every world holds S rows, else a list of K (r_k,n)
    arrays (len, [k] and iteration work alike)."""
    mask, valid = _field(batch, "node_mask"), _field(batch, "valid")
    base, inter = _field(batch, "base"), _field(batch, "inter")
    tgt, im = _field(batch, "target"), _field(batch, "int_mask")
    rows = _field(batch, "rows") if "rows" in batch.keys() else None
    S = base.shape[1]
    for g in range(mask.shape[0]):
        if not valid[g]:
            continue
        n = int(mask[g].sum())
        k = im[g].astype(bool)
        T = tgt[g][k][:, :n].astype(bool)
        r = None if rows is None else rows[g].astype(np.int64)
        if r is None or (r[0] == S and (r[1:][k] == S).all()):
            X = base[g][:, :n].astype(np.float64)
            I = inter[g][k][:, :, :n].astype(np.float64)
        else:
            X = base[g][:r[0], :n].astype(np.float64)
            I = [inter[g][q][:r[q + 1], :n].astype(np.float64) for q in np.flatnonzero(k)]
        yield g, n, X, I, T


def _squash(w, scale):
    """A monotone map of a nonnegative score to [0, 1): w / (w + scale); p > 0.5 <=> w > scale."""
    return w / (w + scale)


def _regress_in_order(X, order):
    """sortnregress: each node regressed (least squares, standardised data)
    on the nodes before it in `order`; (n,n) |coefficient| of i in j's fit."""
    S, n = X.shape
    Z = (X - X.mean(0)) / (X.std(0) + 1e-12)
    W = np.zeros((n, n))
    for pos in range(1, n):
        j, prev = order[pos], order[:pos]
        A = Z[:, prev]
        coef = np.linalg.lstsq(A.T @ A + 1e-6 * np.eye(len(prev)), A.T @ Z[:, j], rcond=None)[0]
        W[prev, j] = np.abs(coef)
    return W


def _r2_each(X):
    """R^2 of each node regressed on all the others: 1 - 1/[C^-1]_jj of the
    correlation matrix C (as twincache_graph_sortability computes it)."""
    n = X.shape[1]
    if n < 2:
        return np.zeros(n)
    C = np.nan_to_num(np.corrcoef(X, rowvar=False))
    d = np.diag(np.linalg.pinv(C))
    return 1.0 - 1.0 / np.maximum(d, 1.0)


def _batch_out(batch):
    mask = _field(batch, "node_mask")
    G, N = mask.shape
    return np.zeros((G, N, N), dtype=np.float64)


def baseline_chance(density):
    """Edge-density chance: every pair scores the cell's mean edge density."""
    def predict(batch):
        out = _batch_out(batch)
        out[:] = density
        return out
    return predict


def baseline_var_sort(batch):
    """var-sort (sortnregress): order by base-world variance, ascending."""
    out = _batch_out(batch)
    for g, n, X, _, _ in _graphs(batch):
        out[g, :n, :n] = _squash(_regress_in_order(X, np.argsort(X.var(0), kind="stable")), 0.25)
    return out


def baseline_r2_sort(batch):
    """R2-sort (sortnregress): order by R^2 on all other nodes, ascending."""
    out = _batch_out(batch)
    for g, n, X, _, _ in _graphs(batch):
        out[g, :n, :n] = _squash(_regress_in_order(X, np.argsort(_r2_each(X), kind="stable")), 0.25)
    return out


def baseline_corr(batch):
    """Marginal |correlation| of the base world (symmetric: orientation 1/2)."""
    out = _batch_out(batch)
    for g, n, X, _, _ in _graphs(batch):
        c = np.abs(np.corrcoef(X, rowvar=False)) if len(X) > 1 else np.zeros((n, n))
        c = np.nan_to_num(c)
        c = 0.5 * (c + c.T)  # exactly symmetric: the tie of (i, j) and (j, i) on any numpy
        np.fill_diagonal(c, 0.0)
        out[g, :n, :n] = np.clip(c, 0.0, 1.0)
    return out


def baseline_twin_T(batch):
    """|T| twin effect: p(i->j) = squash(mean over worlds hitting i of
    mean_s |inter[s,j] - base[s,j]| / std(base[:,j]), 1). Worlds 'hit' i where
    i is a target; with withheld targets (all zero), where i moved."""
    out = _batch_out(batch)
    for g, n, X, I, T in _graphs(batch):
        if len(I) == 0:
            continue
        if isinstance(I, list):  # rows per world: each world over the rows it and the base world hold
            eff = np.stack([np.abs(Ik[:len(X)] - X[:len(Ik)]).mean(axis=0) for Ik in I]) / (X.std(0) + 1e-12)
        else:
            eff = np.abs(I - X[None]).mean(axis=1) / (X.std(0) + 1e-12)  # (K, n)
        hit = T if T.any() else eff > 0
        cnt = hit.sum(0)  # worlds hitting each node (n,)
        tot = hit.T.astype(np.float64) @ eff  # (n, n): sum over worlds hitting i of effect on j
        w = np.where(cnt[:, None] > 0, tot / np.maximum(cnt[:, None], 1), 0.0)
        np.fill_diagonal(w, 0.0)
        out[g, :n, :n] = _squash(w, 1.0)
    return out


def baselines(density):
    return {"chance": baseline_chance(density), "var-sort": baseline_var_sort,
            "r2-sort": baseline_r2_sort, "corr": baseline_corr, "twin-T": baseline_twin_T}
