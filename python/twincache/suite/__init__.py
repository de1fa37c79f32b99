"""twincache.suite — the frozen held-out benchmark: build, check, score.

A suite version is one recipe file (suite/v1.json in the repository,
twincache/suites/v1.json in the wheel): cells, each a regime — twincache-gen
options, seed, graph count — with the digest its cache must have. A cache is a
pure function of (options, seed), so the recipe is the suite.

    twincache-suite build DIR [--threads T] [--cells A,B]   # generate, check digests
    twincache-suite info DIR                                # sortability per cell
    twincache-suite score DIR [PRED.npz] [--out PREFIX]     # baselines (+ a model)
    twincache-suite digest DIR [--update]                   # recompute (rewrite) digests
    twincache-suite import-dcdi FOLDER OUT [--dataset I]     # a DCDI-layout folder -> an observed cache
    twincache-suite score-import OUT.npz                    # the baselines on that store
    (after an intended generator change: rm -rf DIR; build DIR --no-check; digest DIR --update)

    import twincache.suite as ts
    report = ts.score(predict, "suite-dir", cells=["base"])
    ts.write_report(report, "out/model")          # out/model.json, .md (.png)

predict(batch) -> (G, N, N) edge probabilities in [0, 1], p[g, i, j] for the
edge i -> j of graph g, for the batch's padded shape (a numpy array or a torch
tensor). SUITE.md defines every metric and the predictions file.

One concern a module: recipe (recipes, digests), cells (build, stats),
metrics (numpy only), baseline, references (PC/GES/GIES), predictions (the
.npz file), scoring, dcdi (outside data), report, cli. This file only
gathers their public names.
"""
from .baseline import (BASELINES, baseline_chance, baseline_corr, baseline_r2_sort,
                       baseline_twin_T, baseline_var_sort, baselines)
from .cells import build, cell_stats, disk_bytes
from .cli import main
from .dcdi import DCDI_FILES, IMPORT_FORMAT, import_dcdi, load_import, read_dcdi, score_import
from .errors import SuiteError, UnknownCell
from .metrics import (METRICS, PAIR_KINDS, THRESHOLD, average_precision, graph_metrics, roc_auc,
                      shd, shd_double, summarize)
from .predictions import read_predictions, write_predictions
from .recipe import (DEFAULT_VERSION, SUITE_NAME, cache_digest, cell_dir, check_cell_digest,
                     cell_worlds, dump_recipe, gen_args,
                     load_recipe, recipe_path, select_cells, suite_id, update_digests)
from .references import REFERENCE_PINS, REFERENCES, reference_models
from .report import SOLVED_AUPRC, heatmap, markdown, solved_cells, write_report
from .scoring import check_prediction, collect, evaluate, score, score_file, truth
from ..errors import Error  # noqa: F401  (ts.Error, as before the split)

__all__ = [
    "BASELINES", "DCDI_FILES", "DEFAULT_VERSION", "IMPORT_FORMAT", "METRICS", "PAIR_KINDS",
    "REFERENCES", "REFERENCE_PINS", "SOLVED_AUPRC", "SUITE_NAME", "THRESHOLD", "SuiteError", "UnknownCell",
    "average_precision", "baseline_chance", "baseline_corr", "baseline_r2_sort", "baseline_twin_T",
    "baseline_var_sort", "baselines", "build", "cache_digest", "cell_dir", "cell_stats",
    "cell_worlds", "check_cell_digest", "check_prediction", "collect", "disk_bytes", "dump_recipe", "evaluate", "gen_args",
    "graph_metrics", "heatmap", "import_dcdi", "load_import", "load_recipe", "main", "markdown",
    "read_dcdi", "read_predictions", "recipe_path", "reference_models", "roc_auc", "score",
    "score_file", "score_import", "select_cells", "shd", "shd_double", "solved_cells", "suite_id", "summarize",
    "truth", "update_digests", "write_predictions", "write_report"]
