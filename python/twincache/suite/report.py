"""twincache.suite.report — a score report as Markdown tables (each with a
legend line: what its numbers are, SUITE.md for the full definitions), the
closing sentences on where the model stands, a PNG heat map (with
matplotlib) and the files write_report writes."""
import json
import os

import numpy as np

from .baseline import BASELINES
from .metrics import METRICS
from .references import REFERENCES

SOLVED_AUPRC = 0.95  # a cell is "solved" when the best model in the report reaches this AUPRC


def solved_cells(report, threshold=SOLVED_AUPRC):
    """{cell: (model, mean AUPRC)} for every cell where the best mean AUPRC
    over the report's models — baselines, references and any model's
    predictions scored — is >= threshold: the suite no longer tells a good
    model from a better one there. A model without a result or an AUPRC
    for the cell (no edges) does not count; ties go to the first model."""
    out = {}
    for c in report["cells"]:
        best = None
        for m, res in report["results"].items():
            ap = res.get(c, {}).get("metrics", {}).get("auprc", {}).get("mean")
            if ap is not None and (best is None or ap > best[1]):
                best = (m, ap)
        if best is not None and best[1] >= threshold:
            out[c] = best
    return out


def _fmt(s, digits=3):
    if s["mean"] is None:
        return "—"
    return f"{s['mean']:.{digits}f} ±{(s['hi'] - s['mean']):.{digits}f}"


# One legend line under each metric's table: what the number is, in words.
LEGEND = {
    "auprc": "auprc: average precision of the edge scores against the true edges (1 = every edge "
             "above every non-edge; chance scores the edge density).",
    "auroc": "auroc: the chance a true edge scores above a non-edge, ties ½ (0.5 = chance).",
    "shd": "shd: structural Hamming distance at p > 0.5, the node pairs whose edge state "
           "differs, a reversed edge counted once (lower is better).",
    "shd2": "shd2: the same with a reversed edge counted twice, as a missing and an extra edge.",
    "f1": "f1: 2·TP / (#predicted + #true edges) at p > 0.5 (1 when both are empty).",
    "orient": "orient: over the true edges i → j, the share scored above j → i (ties ½; 0.5 = "
              "no sense of direction).",
}
SORTABILITY_LEGEND = (
    "var-/R2-sortability: how often sorting the nodes by base-world variance / by R² on the other "
    "nodes gives the causal order (0.5 = chance, 1 = always); linear-fit share: the R² a linear "
    "fit on the parents reaches, over the true mechanism's R².")
# What each baseline and reference algorithm is, in a few words.
MODEL_LEGEND = {
    "chance": "every pair scores the cell's edge density",
    "var-sort": "sortnregress in order of base-world variance",
    "r2-sort": "sortnregress in order of R² on the other nodes",
    "corr": "|correlation| of the base world",
    "twin-T": "mean |change| of j in the twin worlds that hit i, over sd(j)",
    "pc": "PC (causal-learn)", "ges": "GES (causal-learn)", "gies": "GIES (gies package)",
}


def _round3(x):
    return float(f"{x:.3f}")


def standing(report, metric="auprc"):
    """Where each model stands against the best baseline of each cell, as
    plain sentences (a list of str), from the report's means of `metric`.

    The models are the report's entries that are neither a baseline
    (BASELINES) nor a reference algorithm (REFERENCES); the baselines are
    those of BASELINES the report scored on the cell. Decided here:
      - numbers are compared as printed, rounded to 3 decimals, and the gap
        is the difference of the rounded numbers (so the sentence's
        arithmetic checks out);
      - the best baseline is the highest; baselines tied with it at 3
        decimals are all named, in BASELINES order ("var-sort and twin-T");
      - a model equal to the best (at 3 decimals) is "level with" it;
      - a cell where no baseline has a defined mean (none scored, or no
        graph with an edge) says "no baseline scored on this cell";
      - a model whose mean is undefined there says so and compares nothing;
      - no model in the report (baselines alone): one sentence per cell
        naming the best baseline; without baselines, the best reference
        algorithm (references alone).
    Several cells: one sentence per (model, cell), then per model one
    count "ahead of every baseline on A of C cells, level on L, behind on
    B" (cells without a comparison are left out of C). Returns [] for a
    report without cells."""
    results, cells = report["results"], report["cells"]
    models = [m for m in results if m not in BASELINES and m not in REFERENCES]
    label = metric.upper() if metric in ("auprc", "auroc", "shd", "f1") else metric

    def mean(name, cell):
        r = results.get(name, {}).get(cell)
        v = r["metrics"][metric]["mean"] if r else None
        return None if v is None or v != v else _round3(v)

    def top(vals):  # the best value and every name tied with it, in order
        best = max(vals.values()) if vals else None
        return best, " and ".join(n for n, v in vals.items() if v == best)

    out = []
    for m in models or [None]:
        tally = {"ahead": 0, "level": 0, "behind": 0}
        for c in cells:
            bl = {b: mean(b, c) for b in BASELINES if mean(b, c) is not None}
            best, names = top(bl)
            if m is None:
                refs = {r: mean(r, c) for r in REFERENCES if mean(r, c) is not None}
                if bl:
                    out.append(f"{c}: no model scored; the best baseline is {names} ({label} {best:.3f})")
                elif refs:  # references alone (--no-baselines --reference ...)
                    best_ref, who = top(refs)
                    out.append(f"{c}: no model and no baseline scored; the best reference is {who} "
                               f"({label} {best_ref:.3f})")
                else:
                    out.append(f"{c}: no model and no baseline scored on this cell")
                continue
            if m not in results or c not in results[m]:
                continue
            v = mean(m, c)
            head = f"{c}: {m} {label} "
            if v is None:
                out.append(head + "undefined (no graph of the cell has one), nothing to compare")
            elif not bl:
                out.append(head + f"{v:.3f}; no baseline scored on this cell, nothing to compare")
            elif v > best:
                tally["ahead"] += 1
                out.append(head + f"{v:.3f}: ahead of every baseline (best: {names} {best:.3f}) "
                           f"by {v - best:.3f}")
            elif v == best:
                tally["level"] += 1
                out.append(head + f"{v:.3f}: level with the best baseline, {names} ({best:.3f})")
            else:
                tally["behind"] += 1
                out.append(head + f"{v:.3f}: behind {names} ({best:.3f}) by {best - v:.3f}")
        if m is not None and len(cells) > 1:
            n = sum(tally.values())
            out.append(f"{m} is ahead of every baseline on {tally['ahead']} of {n} cells, level on "
                       f"{tally['level']}, behind on {tally['behind']} ({label}, mean over graphs)")
    return out


def markdown(report, metrics=METRICS):
    """The report as Markdown: per metric a table cells x models (mean ±
    half-width of the 95% interval), the OOD splits as their own tables, the
    pooled AUPRC per kind of pair, and the seconds per cell."""
    models = list(report["results"])
    out = [f"# {report['suite']}: scores (mean ± 95% interval over graphs; "
           f"SHD and F1 at p > {report['threshold']})", ""]
    named = [m for m in models if m in MODEL_LEGEND]
    if named:
        out += ["Models: " + "; ".join(f"{m} = {MODEL_LEGEND[m]}" for m in named) +
                ". Every metric and baseline is defined in suite/SUITE.md (sections Metrics, "
                "Baselines).", ""]

    def table(title, cells, metric):
        rows = [f"### {title}", "", "| cell | " + " | ".join(models) + " |",
                "|---|" + "---|" * len(models)]
        for c in cells:
            vals = []
            for m in models:
                r = report["results"][m].get(c)
                vals.append(_fmt(r["metrics"][metric], 1 if metric.startswith("shd") else 3)
                            if r else "")
            rows.append(f"| {c} | " + " | ".join(vals) + " |")
        return rows + [""] + ([LEGEND[metric], ""] if metric in LEGEND else [])

    for c, why in report.get("skipped", {}).items():
        out += [f"Cell {c} is not scored: {why}.", ""]
    out += ["### cells: what a sort could game (twincache-inspect stats)", "",
            "| cell | var-sortability | R2-sortability | linear-fit share |", "|---|---|---|---|"]
    for c in report["cells"]:
        st = report.get("cell_stats", {}).get(c, {})
        out.append(f"| {c} | " + " | ".join("—" if st.get(k) is None else f"{st[k]:.3f}" for k in
                                            ("var_sortability", "r2_sortability", "linear_share")) + " |")
    out += ["", SORTABILITY_LEGEND, ""]
    for metric in metrics:
        out += table(f"{metric}", report["cells"], metric)
    for split, cells in report["splits"].items():
        if cells:
            out += [f"## OOD split: {split}", ""]
            for metric in ("auprc", "shd", "f1"):
                out += table(f"{split}: {metric}", cells, metric)
    kinds_rows = []
    for c in report["cells"]:
        first = report["results"][models[0]].get(c, {}).get("pair_kinds", {})
        for kname, k in first.items():
            if not k["pairs"]:
                continue
            aps = []
            for m in models:
                ap = report["results"][m].get(c, {}).get("pair_kinds", {}).get(kname, {}).get("auprc")
                aps.append("—" if ap is None or ap != ap else f"{ap:.3f}")
            kinds_rows.append(f"| {c} | {kname} | {k['pairs']} | {k['edges']} | " + " | ".join(aps) + " |")
    if kinds_rows:
        out += ["## AUPRC per kind of pair (pooled over the cell's graphs)", "",
                "| cell | pair (i, j) | pairs | edges | " + " | ".join(models) + " |",
                "|---|---|---|---|" + "---|" * len(models)]
        out += kinds_rows + ["", "pair (i, j) by what the twin worlds moved (a node moved when "
                             "any row differs from the base world's); pairs, edges: counts over "
                             "the cell's graphs; the model columns are AUPRC over those pairs "
                             "pooled.", ""]
    solved = solved_cells(report)
    out += [f"## cells solved (the best model here reaches AUPRC >= {SOLVED_AUPRC}): "
            f"{len(solved)} of {len(report['cells'])}", ""]
    out += [f"- {c}: {m} {ap:.3f}" for c, (m, ap) in solved.items()] + [""]
    out += ["## seconds per cell (predict + metrics: wall clock / CPU of this process, "
            "the loader's decode threads included)", "",
            "| cell | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for c in report["cells"]:
        out.append(f"| {c} | " + " | ".join(
            f"{report['seconds'][m][c]:.2f} / " + (f"{report['cpu_seconds'][m][c]:.2f}" if
                                                   c in report.get("cpu_seconds", {}).get(m, {}) else "?")
            if c in report["seconds"].get(m, {}) else ""
            for m in models) + " |")
    words = standing(report)
    if words:
        out += ["", "## where the model stands (AUPRC against the best baseline of the cell)", ""]
        out += words
    return "\n".join(out) + "\n"


def heatmap(report, path):
    """PNG heat map (cells x metric, one panel per model) when matplotlib is
    importable; returns None on success, else the reason it was not drawn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not importable: no PNG heat map"
    mets = ("auprc", "auroc", "f1", "orient")  # in [0, 1]; SHD is a count, in the tables
    models, cells = list(report["results"]), report["cells"]
    fig, axes = plt.subplots(1, len(models), figsize=(2.2 * len(models) + 2, 0.28 * len(cells) + 1.5),
                             squeeze=False)
    for ax, m in zip(axes[0], models):
        a = np.array([[np.nan if report["results"][m].get(c) is None or
                       report["results"][m][c]["metrics"][k]["mean"] is None
                       else report["results"][m][c]["metrics"][k]["mean"] for k in mets]
                      for c in cells], dtype=float)
        ax.imshow(a, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(m, fontsize=8)
        ax.set_xticks(range(len(mets)))
        ax.set_xticklabels(mets, rotation=90, fontsize=7)
        ax.set_yticks(range(len(cells)))
        ax.set_yticklabels(cells if ax is axes[0][0] else [], fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def write_report(report, prefix):
    """Writes PREFIX.json, PREFIX.md and PREFIX.png (if matplotlib is
    importable). Returns the paths written and a note when the PNG is not."""
    d = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(d, exist_ok=True)
    paths = []
    with open(prefix + ".json", "w") as f:
        json.dump(dict(report, solved={c: {"model": m, "auprc": ap} for c, (m, ap) in
                                       solved_cells(report).items()}), f, indent=1)
    paths.append(prefix + ".json")
    with open(prefix + ".md", "w") as f:
        f.write(markdown(report))
    paths.append(prefix + ".md")
    note = heatmap(report, prefix + ".png")
    if note is None:
        paths.append(prefix + ".png")
    return paths, note
