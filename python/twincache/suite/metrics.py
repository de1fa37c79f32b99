"""twincache.suite.metrics — the metrics of one graph's prediction against
its adjacency (AUPRC, AUROC, SHD once and twice, F1, orientation) and their
summaries over a cell. numpy only: importable without a cache or the C
library (load it by path where the library is absent). SUITE.md defines
every number; the edge cases are decided in each docstring."""
import math

import numpy as np

THRESHOLD = 0.5  # SHD and F1: an edge is predicted where p > THRESHOLD
METRICS = ("auprc", "auroc", "shd", "shd2", "f1", "orient")
PAIR_KINDS = ("neither moved", "only j moved", "both moved", "only i moved")


def average_precision(score, label):
    """sklearn's average precision: sum over distinct thresholds t (descending)
    of (R(t) - R(t_prev)) * P(t). NaN when there is no positive."""
    score = np.asarray(score, dtype=np.float64).ravel()
    label = np.asarray(label).ravel().astype(bool)
    npos = label.sum()
    if npos == 0:
        return float("nan")
    o = np.argsort(-score, kind="mergesort")
    s, y = score[o], label[o]
    tp = np.cumsum(y)
    last = np.r_[np.nonzero(np.diff(s))[0], len(s) - 1]  # last index of each tied group
    tp, k = tp[last], last + 1
    prec, rec = tp / k, tp / npos
    return float(np.sum(np.diff(np.r_[0.0, rec]) * prec))


def roc_auc(score, label):
    """P(score of a random positive > score of a random negative), ties 1/2
    (Mann-Whitney U / (P * N)). NaN without positives or negatives."""
    score = np.asarray(score, dtype=np.float64).ravel()
    label = np.asarray(label).ravel().astype(bool)
    p, n = label.sum(), (~label).sum()
    if p == 0 or n == 0:
        return float("nan")
    o = np.argsort(score, kind="mergesort")
    s = score[o]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):  # average ranks of ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = 0.5 * (i + j) + 1
        i = j + 1
    r = np.empty(len(s))
    r[o] = ranks
    return float((r[label].sum() - p * (p + 1) / 2) / (p * n))


def shd(pred, adj):
    """Structural Hamming distance, a reversal counted ONCE: the number of
    unordered pairs {i, j} whose edge state (none, i->j, j->i, both) differs
    between the 0/1 matrices pred and adj (diagonals ignored)."""
    pred, adj = np.asarray(pred, bool), np.asarray(adj, bool)
    iu = np.triu_indices(len(adj), 1)
    a = adj[iu] * 1 + adj.T[iu] * 2
    b = pred[iu] * 1 + pred.T[iu] * 2
    return int(np.sum(a != b))


def shd_double(pred, adj):
    """SHD with a reversal counted TWICE: the ordered pairs (i, j), i != j,
    where pred and adj differ (sum |pred - adj| off the diagonal)."""
    pred, adj = np.asarray(pred, bool), np.asarray(adj, bool)
    off = ~np.eye(len(adj), dtype=bool)
    return int(np.sum((pred != adj) & off))


def graph_metrics(p, adj):
    """Metrics of one graph's (n,n) prediction p against adj (see SUITE.md),
    over the n(n-1) ordered pairs i != j (the diagonal is never scored).

    Edge cases, decided here:
      f1      2 TP / (#predicted + #true) at p > THRESHOLD; 1.0 when both are
              empty (an empty prediction of an empty graph is right), 0.0
              when only one is.
      orient  over the true edges i -> j, the share with p[i,j] > p[j,i]; a
              tie counts 1/2; NaN (left out of the cell's mean) without edges.
      auprc   NaN without an edge; auroc NaN without an edge or a non-edge
              (a graph of one node has neither)."""
    n = len(adj)
    off = ~np.eye(n, dtype=bool)
    s, y = p[off], adj[off].astype(bool)
    b = (p > THRESHOLD) & off
    tp = int(np.sum(b & adj.astype(bool)))
    npred, ntrue = int(b.sum()), int(y.sum())
    f1 = 2 * tp / (npred + ntrue) if npred + ntrue else 1.0
    ii, jj = np.nonzero(adj.astype(bool) & off)
    if len(ii):
        d = p[ii, jj] - p[jj, ii]
        orient = float(np.mean((d > 0) + 0.5 * (d == 0)))
    else:
        orient = float("nan")
    return {"auprc": average_precision(s, y), "auroc": roc_auc(s, y), "shd": shd(b, adj),
            "shd2": shd_double(b, adj), "f1": f1, "orient": orient}


def pair_kinds(moved):
    """(n,n) int8, index in PAIR_KINDS of each ordered pair (i, j), from
    moved (K,n) bool = which nodes world k moved: 2 both moved (one world
    moved i and j), else 1 only j moved (some world), else 3 only i moved,
    else 0 neither. The diagonal gets a kind too; pooled_pair_kinds skips it."""
    moved = np.asarray(moved, bool)
    both = (moved[:, :, None] & moved[:, None, :]).any(axis=0)
    any_moved = moved.any(axis=0)
    jm = np.broadcast_to(any_moved[None, :], both.shape)
    im = np.broadcast_to(any_moved[:, None], both.shape)
    return np.where(both, 2, np.where(jm, 1, np.where(im, 3, 0))).astype(np.int8)


def pooled_pair_kinds(graphs):
    """AUPRC per kind of pair pooled over graphs, an iterable of (p (n,n),
    adj (n,n), kinds (n,n) or None): {kind name: {pairs, edges, auprc}} over
    the pairs i != j (the diagonal is no pair), every kind once some graph
    has kinds ({} when none has); auprc is NaN for a kind without edges,
    None (pairs 0) for a kind without pairs."""
    pooled = {k: ([], []) for k in range(len(PAIR_KINDS))}
    for q, adj, kinds in graphs:
        if kinds is None:
            continue
        off = ~np.eye(len(adj), dtype=bool)
        for k in pooled:
            m = (kinds == k) & off
            pooled[k][0].append(q[m])
            pooled[k][1].append(adj[m])
    out = {}
    for k, (s, y) in pooled.items():
        if s:
            s, y = np.concatenate(s), np.concatenate(y)
            out[PAIR_KINDS[k]] = {"pairs": int(len(y)), "edges": int(y.sum()),
                                  "auprc": average_precision(s, y) if len(y) else None}
    return out


def summarize(values):
    """mean and a 95% interval (mean +- 1.96 sd / sqrt(n), normal approximation)
    over the finite values; n counts them."""
    v = np.asarray([x for x in values if x == x], dtype=np.float64)
    if len(v) == 0:
        return {"mean": None, "lo": None, "hi": None, "n": 0}
    m = float(v.mean())
    h = 1.96 * float(v.std(ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else 0.0
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(len(v))}
