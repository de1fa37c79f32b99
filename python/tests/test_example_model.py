"""The example model's statistics (examples/twin_model.py): the additive fits
that rank the edges must compute what their docstrings say, since a wrong
share would only show as a lower AUPRC hours later."""
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import twin_model as tm  # noqa: E402


def direct_fit(F, y, ridge):
    """The definition, one node at a time: kernel ridge of y_j on the blocks of
    every node but j -> share (B,N,N), r2 (B,N), in float64."""
    B, N, S, m = F.shape
    F, y = F.double(), y.double()
    share = torch.zeros(B, N, N, dtype=torch.float64)
    r2 = torch.zeros(B, N, dtype=torch.float64)
    for g in range(B):
        for j in range(N):
            others = [i for i in range(N) if i != j]
            phi = torch.cat([F[g, i] for i in others], dim=1)  # (S, (N-1) m)
            alpha = torch.linalg.solve(phi @ phi.T + ridge * torch.eye(S, dtype=torch.float64), y[g, j])
            yy = y[g, j].square().sum()
            for i in others:
                part = F[g, i] @ (F[g, i].T @ alpha)
                share[g, i, j] = part.square().sum() / yy
            r2[g, j] = 1 - (y[g, j] - phi @ (phi.T @ alpha)).square().sum() / yy
    return share, r2


def test_additive_fit_matches_the_direct_solve():
    gen = torch.Generator().manual_seed(3)
    F = torch.randn(2, 5, 24, 6, generator=gen)
    F[1, 4] = 0  # a node that may not explain (padded, or unmoved in a twin fit)
    y = torch.randn(2, 5, 24, generator=gen)
    for ridge in (0.3, 4.0):
        share, r2 = tm._additive_fit(F, y, ridge)
        ref_share, ref_r2 = direct_fit(F, y, ridge)
        assert torch.allclose(share.double(), ref_share, rtol=1e-4, atol=1e-6)
        assert torch.allclose(r2.double(), ref_r2, rtol=1e-4, atol=1e-6)
        assert torch.all(share.diagonal(dim1=1, dim2=2) == 0)
        assert torch.all(share[1, 4] == 0)


def test_additive_fit_finds_a_bump_a_line_misses():
    """y = bump(x_0) + noise, with x_1 a distractor: the bump is invisible to a
    correlation (it is even), the additive fit gives it most of the share."""
    gen = torch.Generator().manual_seed(5)
    S = 64
    x = torch.randn(3, S, generator=gen)
    y = 2 * torch.exp(-2 * x[0].square()) + 0.3 * torch.randn(S, generator=gen)
    y = (y - y.mean()) / y.std()
    z = torch.stack([x[0], x[1], y])  # (N=3, S)
    F = tm._basis(z)
    F = (F - F.mean(dim=1, keepdim=True))[None]
    share, r2 = tm._additive_fit(F, z[None], tm.RIDGE_BASE)
    assert abs(float(torch.corrcoef(torch.stack([x[0], y]))[0, 1])) < 0.3
    # (the ridge shrinks the fit: the share is below the bump's true 0.8 of y)
    assert share[0, 0, 2] > 0.3 and share[0, 0, 2] > 10 * share[0, 1, 2], share[0, :, 2]
    assert r2[0, 2] > 0.3


def test_twin_stats_shapes_padding_and_names():
    gen = torch.Generator().manual_seed(7)
    G, K, S, N = 3, 2, 16, 6
    base = torch.randn(G, S, N, generator=gen)
    inter = base[:, None].repeat(1, K, 1, 1)
    target = torch.zeros(G, K, N)
    target[:, 0, 1] = 1
    target[:, 1, 3] = 1
    inter[:, 0, :, 1] = 2.0  # do(x_1 = 2), and x_2 its child moves with it
    inter[:, 0, :, 2] += 0.5 * (2.0 - base[:, :, 1])
    inter[:, 1, :, 3] = -1.0
    node_mask = torch.ones(G, N, dtype=torch.bool)
    node_mask[2, 4:] = False  # a smaller graph: nodes 4 and 5 are padding
    int_mask = torch.ones(G, K, dtype=torch.bool)
    int_mask[1, 1] = False  # a padded twin world
    pair, node = tm.twin_stats(base, inter, target, node_mask, int_mask)
    assert pair.shape == (G, N, N, tm.PAIR_STATS) and node.shape == (G, N, tm.NODE_STATS)
    assert len(tm.PAIR_NAMES) == tm.PAIR_STATS
    assert torch.isfinite(pair).all() and torch.isfinite(node).all()
    assert torch.all(pair[2, 4:] == 0) and torch.all(pair[2, :, 4:] == 0)
    assert torch.all(node[2, 4:] == 0)
    assert torch.all(pair.diagonal(dim1=1, dim2=2) == 0)
    dgam = pair[..., tm.PAIR_NAMES.index("dgam")]
    # the only moved non-target is x_2, moved by x_1 alone: x_1 explains its d
    assert torch.all(dgam[:, 1, 2] > 0.9), dgam[:, :, 2]
    assert torch.all(dgam[:, :, 0] == 0)  # x_0 never moved: nothing explains it
    dropped, _ = tm.twin_stats(base, inter, target, node_mask, int_mask, drop=("gam", "dgam"))
    assert torch.all(dropped[..., tm.PAIR_NAMES.index("dgam")] == 0)
