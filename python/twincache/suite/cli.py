"""twincache.suite.cli — the twincache-suite command line: one line and a
non-zero exit for every failure (2: a usage error)."""
import argparse
import sys
import time

from .cells import build, cell_stats, disk_bytes
from .dcdi import import_dcdi, score_import
from .errors import Error, UnknownCell
from .metrics import METRICS
from .recipe import cache_digest, cell_dir, gen_args, load_recipe, select_cells, suite_id, update_digests
from .references import REFERENCES
from .report import LEGEND, SORTABILITY_LEGEND, markdown, standing, write_report
from .scoring import score, score_file


def _usage(msg):
    print(f"twincache-suite: {msg}", file=sys.stderr)
    return 2


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="twincache-suite",
        description="The frozen held-out benchmark of twincache: build its caches (checked by "
                    "digest), list their sortability, score predictions beside the baselines.")
    ap.add_argument("--recipe", help="a recipe file, or v1 / v2: the package's own (default: v1)")
    # --recipe also after the command (`build --recipe v2 DIR`): given there, it wins
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--recipe", default=argparse.SUPPRESS,
                        help="a recipe file, or v1 / v2: the package's own (default: v1)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", parents=[common],
                       help="generate every cell under DIR and check its digest")
    b.add_argument("dir")
    b.add_argument("--threads", type=int, default=2, help="twincache-gen threads (default 2)")
    b.add_argument("--cells", help="comma-separated cell names (default: all)")
    b.add_argument("--no-check", action="store_true",
                   help="do not compare digests (before `digest --update`, on a fresh DIR)")
    b.add_argument("--cdt", metavar="PATH",
                   help="the real-data cells' files: the cdt 0.6.0 wheel, or a folder holding "
                        "cdt (default: the installed cdt; without it those cells are skipped)")
    i = sub.add_parser("info", parents=[common],
                       help="cells with var-/R2-sortability and linear-fit share")
    i.add_argument("dir", nargs="?", help="a built suite (without: the recipe only)")
    i.add_argument("--cells")
    g = sub.add_parser("args", parents=[common],
                       help="the twincache-gen flags of a cell's regime (no --seed, "
                                    "--graphs): to generate training data like it")
    g.add_argument("cell")
    d = sub.add_parser("digest", parents=[common],
                       help="recompute digests of a built suite; --update writes them")
    d.add_argument("dir")
    d.add_argument("--cells")
    d.add_argument("--update", action="store_true", help="rewrite the recipe's digests")
    m = sub.add_parser("import-dcdi", parents=[common],
                       help="read a DCDI-layout folder (DAG<i>.npy, data_interv<i>.npy, "
                                          "intervention<i>.csv, regime<i>.csv) into OUT, a new twincache "
                                          "cache of observed data (FORMAT.md 3.11) score-import scores")
    m.add_argument("src", metavar="DIR")
    m.add_argument("out", metavar="OUT")
    m.add_argument("--dataset", type=int, help="DCDI's i_dataset (default: the folder's only one)")
    q = sub.add_parser("score-import", parents=[common],
                       help="the baselines' metrics on an import-dcdi cache (or an .npz "
                                           "store of before)")
    q.add_argument("store", metavar="OUT")
    s = sub.add_parser("score", parents=[common],
                       help="score a predictions .npz (and/or the baselines)")
    s.add_argument("dir")
    s.add_argument("predictions", nargs="?", help="PRED.npz (see SUITE.md); without: baselines only")
    s.add_argument("--cells")
    s.add_argument("--name", help="the model's name in the tables (default: the file's)")
    s.add_argument("--no-baselines", action="store_true")
    s.add_argument("--reference", nargs="?", const="pc,ges,gies", metavar="NAMES",
                   help="add the reference algorithms: pc, ges (pip install causal-learn==0.1.4.0), "
                        "gies (pip install gies==0.0.3); comma-separated, default all three "
                        "(slow: N = 10 cells)")
    s.add_argument("--out", help="write OUT.json, OUT.md (and OUT.png); default: Markdown to stdout")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        recipe = load_recipe(a.recipe)
        if a.cmd == "build":
            if a.threads < 1 or a.threads > 1024:
                return _usage(f"--threads {a.threads}: an integer in [1, 1024]")
            t0 = time.perf_counter()
            r = build(a.dir, a.threads, a.cells, recipe, check=not a.no_check,
                      sources={"cdt": a.cdt} if a.cdt else None)
            print(f"{suite_id(recipe)}: {len(r)} cells built and checked in "
                  f"{time.perf_counter() - t0:.1f} s, {disk_bytes(a.dir) / 2**20:.1f} MiB "
                  f"on disk under {a.dir}")
        elif a.cmd == "args":
            print(" ".join(gen_args(select_cells(recipe, [a.cell])[0])[4:]))
        elif a.cmd == "digest":
            if a.update:
                ch = update_digests(a.dir, a.cells, recipe)
                print(f"{recipe['_path']}: {len(ch)} digest(s) changed"
                      + (": " + ", ".join(ch) if ch else ""))
            else:
                bad = 0
                for c in select_cells(recipe, a.cells):
                    dg = cache_digest(cell_dir(a.dir, c))
                    ok = dg == c.get("digest")
                    bad += not ok
                    print(f"{c['name']:28s} {dg} {'ok' if ok else 'DIFFERS'}")
                return 1 if bad else 0
        elif a.cmd == "info":
            print(f"{suite_id(recipe)} ({recipe['_path']})")
            hdr = f"{'cell':28s} {'graphs':>6s}"
            if a.dir:
                hdr += f" {'var-sort':>8s} {'R2-sort':>8s} {'lin.share':>9s}"
            print(hdr + "  options")
            for c in select_cells(recipe, a.cells):
                line = f"{c['name']:28s} {c['graphs']:6d}"
                if a.dir:
                    st = cell_stats(a.dir, c)
                    line += "".join(f" {'—' if v is None else format(v, '.3f'):>{w}s}" for v, w in
                                    ((st["var_sortability"], 8), (st["r2_sortability"], 8),
                                     (st["linear_share"], 9)))
                opts = (f"real: {c['source']['package']} {c['source']['version']} "
                        f"{c['source']['data']['path']}, {c['rows']} rows, {len(c['edges'])} edges"
                        if "source" in c else " ".join(gen_args(c)[4:]))
                print(line + "  " + opts +
                      (" [targets withheld]" if c.get("withhold_targets") else ""))
            if a.dir:
                print(SORTABILITY_LEGEND)
        elif a.cmd == "import-dcdi":
            if a.dataset is not None and not 1 <= a.dataset <= 999999:
                return _usage(f"--dataset {a.dataset}: an integer in [1, 999999]")
            d = import_dcdi(a.src, a.out, a.dataset)
            print(f"{a.out}: dataset {d['dataset']}, {len(d['adj'])} nodes, {int(d['adj'].sum())} edges, "
                  f"{len(d['base'])} observational rows, {len(d['rows'])} interventional regimes "
                  f"({int(d['rows'].sum())} rows)")
        elif a.cmd == "score-import":
            res = score_import(a.store)
            print(f"{'model':10s} " + " ".join(f"{m:>7s}" for m in METRICS))
            for name, r in res.items():
                print(f"{name:10s} " + " ".join(
                    f"{'—' if r['metrics'][m]['mean'] is None else format(r['metrics'][m]['mean'], '.3f'):>7s}"
                    for m in METRICS))
            print("\n".join(LEGEND[m] for m in METRICS))
        elif a.cmd == "score":
            refs = a.reference and [x.strip() for x in a.reference.split(",")]
            for x in refs or ():
                if x not in REFERENCES:
                    return _usage(f"--reference {a.reference}: {x!r} is none of {', '.join(REFERENCES)}")
            if a.predictions:
                rep = score_file(a.predictions, a.dir, a.cells, a.name, not a.no_baselines, recipe,
                                 refs)
            else:
                if a.no_baselines and not refs:
                    return _usage("score: nothing to score (no predictions file, --no-baselines)")
                rep = score(None, a.dir, a.cells, baselines=not a.no_baselines, recipe=recipe,
                            reference=refs)
            if a.out:
                paths, note = write_report(rep, a.out)
                print("wrote " + ", ".join(paths) + (f" ({note})" if note else ""))
                words = standing(rep)
                if words:
                    print("\n".join(words))
            else:
                sys.stdout.write(markdown(rep))
    except UnknownCell as e:
        return _usage(str(e))
    except Error as e:
        print(f"twincache-suite: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a report or store that cannot be written, and the like
        print(f"twincache-suite: {e}", file=sys.stderr)
        return 1
    return 0
