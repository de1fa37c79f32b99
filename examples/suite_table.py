#!/usr/bin/env python3
"""suite_table.py — one Markdown table of AUPRC per suite cell from the JSON
reports `twincache-suite score ... --out PREFIX` writes (PREFIX.json): every
model of every report as a column, the best baseline or reference per cell,
the cells where the best of everything reaches 0.95 marked solved (SUITE.md),
and SEA's published mAP where a cell matches (SUITE.md, "Published figures").

usage: python3 examples/suite_table.py REPORT.json [REPORT.json ...]
           [--models c-model=C trainer,var-sort,...] [--recipe v2] [--out TABLE.md]
Models named in --models come first, in that order, labelled as given
(NAME=LABEL); without it every model in the reports, in order of appearance.
A model two reports both hold keeps the first report's numbers. With
--recipe (v1, v2 or a recipe file) the rows are the recipe's cells in its
order: a report's cell the recipe no longer has (an older revision's) is
left out, named on stderr."""
import argparse
import json
import os
import sys

SOLVED = 0.95  # SUITE.md: a cell is solved where the best model reaches this AUPRC
BASELINES = ("var-sort", "r2-sort", "corr", "twin-T", "pc", "ges", "gies")  # chance left out
# SEA's scale-free mAP (SEA with FCI / with GIES), as SUITE.md quotes it (the authors'
# notebook examples/SEA-results.ipynb of rmwu/sea, commit bfb507b)
PUBLISHED = {"sea-sf10-linear": "0.94 / 0.95", "sea-sf10-sigmoid": "0.81 / 0.85",
             "sea-sf10-poly": "0.76 / 0.74", "sea-sf20-linear": "0.95 / 0.93",
             "sea-sf20-sigmoid": "0.84 / 0.82", "sea-sf20-poly": "0.70 / 0.70"}


def load(paths):
    """(cells in order, {model: {cell: auprc mean}}, {cell: var-sortability})."""
    cells, auprc, vsort = [], {}, {}
    for p in paths:
        try:
            with open(p) as f:
                rep = json.load(f)
            res = rep["results"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"suite_table.py: {p}: not a twincache-suite score report (.json): {e}")
        for c in rep.get("cells", []):
            if c not in cells:
                cells.append(c)
            st = rep.get("cell_stats", {}).get(c) or {}
            if st.get("var_sortability") is not None:
                vsort.setdefault(c, st["var_sortability"])
        for m, per in res.items():
            have = auprc.setdefault(m, {})
            for c, r in per.items():
                if c not in have:
                    have[c] = r["metrics"]["auprc"]["mean"]
    return cells, auprc, vsort


def table(cells, auprc, vsort, columns):
    """The Markdown lines: the per-cell table and its summary."""
    shipped = [m for m, _ in columns if m not in BASELINES and m != "chance"]
    head = ["cell", "var-sortab."] + [lab for _, lab in columns] + ["best baseline / reference",
                                                                    "SEA mAP (FCI / GIES)", "solved"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ahead = {m: [0, 0] for m in shipped}
    solved = 0

    def fmt(v):
        return "—" if v is None or v != v else f"{v:.3f}"
    for c in cells:
        vals = {m: auprc.get(m, {}).get(c) for m, _ in columns}
        base = [(auprc[m][c], m) for m in BASELINES if c in auprc.get(m, {})
                and auprc[m][c] == auprc[m][c]]
        best_b = max(base) if base else None
        every = [v for v in vals.values() if v is not None and v == v] + [v for v, _ in base]
        is_solved = bool(every) and max(every) >= SOLVED
        solved += is_solved
        for m in shipped:
            if vals[m] is not None and best_b is not None:
                ahead[m][1] += 1
                ahead[m][0] += vals[m] > best_b[0]
        row = [c, fmt(vsort.get(c))] + [fmt(vals[m]) for m, _ in columns]
        row += [f"{best_b[1]} {best_b[0]:.3f}" if best_b else "—", PUBLISHED.get(c, "—"),
                "**solved**" if is_solved else ""]
        out.append("| " + " | ".join(row) + " |")
    labels = dict(columns)
    out += ["", f"Solved (the best of every column ≥ {SOLVED}): {solved} of {len(cells)} cells."]
    for m in shipped:
        out.append(f"{labels[m]}: ahead of the best baseline or reference on {ahead[m][0]} of "
                   f"{ahead[m][1]} cells.")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", help="PREFIX.json files of twincache-suite score --out")
    ap.add_argument("--models", help="comma-separated NAME or NAME=LABEL: the columns, in order")
    ap.add_argument("--out", help="write the table here (default: stdout)")
    ap.add_argument("--recipe", help="list the cells of this recipe (v1, v2 or a file), in its order")
    a = ap.parse_args()
    cells, auprc, vsort = load(a.reports)
    if a.recipe:
        try:  # the installed package; else this checkout's source tree
            import twincache.suite as ts
        except ImportError:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
            import twincache.suite as ts
        try:
            recipe = ts.load_recipe(a.recipe)
        except ts.Error as e:
            sys.exit(f"suite_table.py: --recipe: {e}")
        names = [c["name"] for c in recipe["cells"]]
        stale = [c for c in cells if c not in names]
        if stale:
            print(f"suite_table.py: left out {len(stale)} cell(s) the recipe does not have: "
                  f"{', '.join(stale)}", file=sys.stderr)
        cells = names
    if a.models:
        columns = []
        for item in a.models.split(","):
            name, _, label = item.partition("=")
            if name not in auprc:
                sys.exit(f"suite_table.py: --models: {name!r} is in no report (they hold: "
                         f"{', '.join(auprc)})")
            columns.append((name, label or name))
    else:
        columns = [(m, m) for m in auprc if m != "chance"]
    text = "\n".join(table(cells, auprc, vsort, columns)) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
