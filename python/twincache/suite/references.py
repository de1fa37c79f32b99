"""twincache.suite.references — the reference algorithms PC and GES
(causal-learn) and GIES (the gies package), none a dependency of twincache:
imported only when asked for, as predict functions like the baselines."""
import numpy as np

from .baseline import _batch_out, _graphs
from .errors import SuiteError


def _cpdag_probs(G):
    """causal-learn's graph matrix (G[j,i] = 1 and G[i,j] = -1 <=> i -> j;
    both -1: undirected) as (n,n) probabilities: 1 on i -> j, 0.5 both ways
    on an undirected edge (below the SHD/F1 threshold), 0 elsewhere."""
    G = np.asarray(G)
    p = ((G.T == 1) & (G == -1)).astype(np.float64)
    p[(G == -1) & (G.T == -1)] = 0.5
    np.fill_diagonal(p, 0.0)
    return p


REFERENCES = ("pc", "ges", "gies")
REFERENCE_PINS = {"pc": "causal-learn==0.1.4.0", "ges": "causal-learn==0.1.4.0", "gies": "gies==0.0.3"}


def _gies_fit(X, I, T, independent=False):
    """GIES (Hauser & Buehlmann 2012; the gies package, Gaussian BIC) on the
    base world as the observational environment and every interventional
    world as one environment with its targets. GIES's score assumes
    independent samples. On independent worlds (FORMAT.md 3.9: each world
    its own noise) they are: every environment gets all the rows its world
    holds. Twin rows repeat the base rows' noise: given every row of every
    twin world GIES counts each noise draw K + 1 times and adds spurious
    edges (rows1000-n10: SHD 9.9 against 0.6). So on twin worlds each
    environment gets its own block of b = S // (K + 1) rows: the base world
    rows [0, b), world k rows [(k + 1) b, (k + 2) b) — no noise draw enters
    twice. Rows per world (FORMAT.md 3.10: world k holds r_k rows, the base
    r_0): b is also at most r_0 and every r_k // (k + 2), so each block
    lies in rows its world holds (with every count S, the same b). With
    the targets withheld (T all zero) no world can be given its targets:
    GIES then sees the base world alone, all its rows (= GES's search with
    gies's score)."""
    import gies
    if len(I) == 0 or not T.any():
        return gies.fit_bic([X], [[]])[0]
    K, S = len(I), len(X)
    targets = [[]] + [np.flatnonzero(T[k]).tolist() for k in range(K)]
    if independent:
        if min([len(X)] + [len(I[k]) for k in range(K)]) < 2:
            raise SuiteError("GIES: a world holds fewer than 2 rows")
        return gies.fit_bic([X] + [I[k] for k in range(K)], targets)[0]
    b = S // (K + 1)
    if isinstance(I, list):  # rows per world: blocks inside the rows each world holds
        b = min([b, S] + [len(I[k]) // (k + 2) for k in range(K)])
    if b < 2:
        raise SuiteError(f"GIES: {S} rows over {K + 1} worlds leave fewer than 2 rows per world "
                         f"(each world gets its own rows; run it on cells with S >= {2 * (K + 1)})")
    data = [X[:b]] + [I[k][(k + 1) * b:(k + 2) * b] for k in range(K)]
    return gies.fit_bic(data, targets)[0]


def _essential_probs(A):
    """An I-essential graph as gies returns it (A[i,j] != 0 and A[j,i] == 0
    <=> i -> j; both nonzero: undirected) as _cpdag_probs's probabilities."""
    A = np.asarray(A) != 0
    p = (A & ~A.T).astype(np.float64)
    p[A & A.T] = 0.5
    np.fill_diagonal(p, 0.0)
    return p


def reference_models(names=None):
    """The reference algorithms (never dependencies of this package; pins in
    REFERENCE_PINS): causal-learn's PC (Fisher-z tests, alpha 0.05) and GES
    (BIC) on the base world's samples (observational), and GIES (the gies
    package, BIC) on the base and interventional worlds with their targets
    (interventional; disjoint row blocks on twin worlds, all rows on
    independent ones: _gies_fit). names: an iterable of REFERENCES (None: all). Raises
    SuiteError naming an unknown one or the package to install."""
    names = list(REFERENCES if names is None else names)
    for n in names:
        if n not in REFERENCES:
            raise SuiteError(f"reference {n!r}: one of {', '.join(REFERENCES)}")
    fits = {}
    try:
        if "pc" in names:
            from causallearn.search.ConstraintBased.PC import pc
            fits["pc"] = lambda X, I, T, ind: _cpdag_probs(
                pc(X, 0.05, "fisherz", show_progress=False, verbose=False).G.graph)
        if "ges" in names:
            from causallearn.search.ScoreBased.GES import ges
            fits["ges"] = lambda X, I, T, ind: _cpdag_probs(ges(X, score_func="local_score_BIC")["G"].graph)
        if "gies" in names:
            import gies  # noqa: F401
            fits["gies"] = lambda X, I, T, ind: _essential_probs(_gies_fit(X, I, T, ind))
    except ImportError as e:
        pins = " ".join(sorted({REFERENCE_PINS[n] for n in names}))
        raise SuiteError(f"the reference algorithms {', '.join(names)} need pip install {pins}: "
                         f"{e}") from None

    def run(fit):
        def predict(batch):
            out = _batch_out(batch)
            independent = getattr(batch, "worlds", "twin") == "independent"
            for g, n, X, I, T in _graphs(batch):
                out[g, :n, :n] = fit(X, I, T, independent)
            return out
        return predict
    return {n: run(fits[n]) for n in names}
