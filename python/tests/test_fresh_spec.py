"""FORMAT.md 3.8 (and 3.9, independent worlds) specifies fresh worlds completely: fresh_reference.py, a
reader written from that text alone, reproduces `twincache-inspect show
--fresh-rows S --epoch E` bit for bit for every noise family, mechanism and
intervention kind (soft worlds on roots among them), standardised and iSCM,
multi-target, twin and independent worlds; and the promise on row counts: without standardisation a
world of S' < S rows is the first S' rows of the S-row world (the noise of
a row never depends on S)."""
import json
import os
import subprocess

import numpy as np
import pytest

import twincache

import fresh_reference as ref

CASES = {
    "gauss-linear-do": [],
    "laplace-mlp-shift": ["--noise", "laplace", "--mechanism", "mlp", "--intervention", "shift"],
    "uniform-rff-noise": ["--noise", "uniform", "--mechanism", "rff", "--intervention", "noise",
                          "--values", "0.2:2", "--value-dist", "uniform"],
    "cauchy-sigmoid-soft": ["--noise", "cauchy", "--mechanism", "sigmoid", "--intervention", "soft"],
    "gumbel-poly-std": ["--noise", "gumbel", "--mechanism", "poly", "--standardize"],
    "mixed-iscm-soft": ["--mechanism", "linear:1,mlp:1,rff:1", "--iscm", "--intervention", "soft"],
    "linear-std-multi": ["--standardize", "--targets", "3", "--targets-per-world", "2:3"],
    "linear-soft-std": ["--intervention", "soft", "--standardize"],
    # independent worlds (3.9): each world's noise from its own key
    "indep-gauss-linear-std-multi": ["--worlds", "independent", "--standardize", "--targets", "3",
                                     "--targets-per-world", "1:2"],
    "indep-laplace-mlp-iscm-shift": ["--worlds", "independent", "--noise", "laplace", "--mechanism", "mlp",
                                     "--iscm", "--intervention", "shift"],
    "indep-uniform-rff-noise": ["--worlds", "independent", "--noise", "uniform", "--mechanism", "rff",
                                "--intervention", "noise", "--values", "0.2:2"],
    "indep-cauchy-sigmoid-soft": ["--worlds", "independent", "--noise", "cauchy", "--mechanism", "sigmoid",
                                  "--intervention", "soft"],
}


def show(inspect_exe, path, index, rows, epoch):
    out = subprocess.run([inspect_exe, "show", path, str(index), "--fresh-rows", str(rows), "--epoch",
                          str(epoch), "--json"], check=True, capture_output=True, text=True).stdout
    g = json.loads(out)
    base = np.array(g["base"], dtype=np.float32).reshape(rows, g["n_nodes"])
    inter = np.array(g["inter"], dtype=np.float32).reshape(g["n_inter"], rows, g["n_nodes"])
    return base, inter


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("case", sorted(CASES))
def test_reference_reader_reproduces_show(case, gen_exe, inspect_exe, tmp_root):
    path = os.path.join(tmp_root, "fresh-spec-" + case)
    subprocess.run([gen_exe, "--out", path, "--graphs", "6", "--nodes", "3:7", "--samples", "0",
                    "--edge-prob", "0.6", "--seed", "11", "--threads", "1", "--quiet", *CASES[case]],
                   check=True)
    soft_roots = 0  # soft worlds on a root (FORMAT.md 3.6: new noise scale and mean)
    with twincache.Cache(path) as c:
        tag = ref.fnv1a64(c.config_text.encode("utf-8"))
        for index, rows, epoch in [(0, 9, 0), (3, 16, 2), (5, 33, 1)]:
            g = c[index]
            soft_roots += sum(int(g.kind[k]) == 3 and not g.adj[:, t].any()
                              for k in range(g.n_inter) for t in g.target_sets[k])
            want_base, want_inter = show(inspect_exe, path, index, rows, epoch)
            base, inter = ref.fresh_worlds(g, tag, epoch, rows)
            assert same_bits(base, want_base), (case, index, np.abs(base - want_base).max())
            assert same_bits(inter, want_inter), (case, index, np.abs(inter - want_inter).max())
    if "soft" in CASES[case]:
        assert soft_roots > 0, case


def test_fewer_rows_are_the_first_rows(gen_exe, inspect_exe, tmp_root):
    path = os.path.join(tmp_root, "fresh-spec-prefix")
    subprocess.run([gen_exe, "--out", path, "--graphs", "4", "--nodes", "5:8", "--samples", "0",
                    "--mechanism", "mlp", "--quiet"], check=True)
    base, inter = show(inspect_exe, path, 2, 40, 1)
    half_base, half_inter = show(inspect_exe, path, 2, 20, 1)
    assert same_bits(half_base, np.ascontiguousarray(base[:20]))
    assert same_bits(half_inter, np.ascontiguousarray(inter[:, :20]))
    # standardised: the same noise, but the map is the S rows' own statistics
    std = os.path.join(tmp_root, "fresh-spec-prefix-std")
    subprocess.run([gen_exe, "--out", std, "--graphs", "4", "--nodes", "5:8", "--samples", "0",
                    "--standardize", "--quiet"], check=True)
    base, _ = show(inspect_exe, std, 2, 40, 1)
    half_base, _ = show(inspect_exe, std, 2, 20, 1)
    assert not np.array_equal(half_base, base[:20])
