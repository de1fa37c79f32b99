"""twincache.suite.report — a score report as Markdown tables, a PNG heat
map (with matplotlib) and the files write_report writes."""
import json
import os

import numpy as np

from .metrics import METRICS

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


def markdown(report, metrics=METRICS):
    """The report as Markdown: per metric a table cells x models (mean ±
    half-width of the 95% interval), the OOD splits as their own tables, the
    pooled AUPRC per kind of pair, and the seconds per cell."""
    models = list(report["results"])
    out = [f"# {report['suite']}: scores (mean ± 95% interval over graphs; "
           f"SHD and F1 at p > {report['threshold']})", ""]

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
        return rows + [""]

    out += ["### cells: what a sort could game (twincache-inspect stats)", "",
            "| cell | var-sortability | R2-sortability | linear-fit share |", "|---|---|---|---|"]
    for c in report["cells"]:
        st = report.get("cell_stats", {}).get(c, {})
        out.append(f"| {c} | " + " | ".join("—" if st.get(k) is None else f"{st[k]:.3f}" for k in
                                            ("var_sortability", "r2_sortability", "linear_share")) + " |")
    out.append("")
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
        out += kinds_rows + [""]
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
