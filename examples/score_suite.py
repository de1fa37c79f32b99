#!/usr/bin/env python3
"""score_suite.py — a train_avici.py model scored on the held-out suite
(suite/SUITE.md) beside the suite's baselines: the model becomes a
predict(batch) -> (G, N, N) edge probabilities for twincache.suite.score.

usage: python3 examples/score_suite.py --checkpoint run.pt --suite SUITE_DIR
           [--cells base,inter-obs] [--out scores/run] [--batch 32]
SUITE_DIR is what `twincache-suite build SUITE_DIR` made. Writes OUT.json and
OUT.md (and OUT.png with matplotlib); without --out the Markdown goes to stdout.
The model sees what it was trained on: the rows, twin rows and statistics
its checkpoint's flags name."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_avici as ta  # noqa: E402  (this folder; it finds twincache as the script does)
from twin_model import TwinModel  # noqa: E402


def load_checkpoint(path, prog="score_suite.py"):
    """The TwinModel of a train_avici.py checkpoint (eval mode) and its
    flags; exits naming prog and the file when it is not one."""
    if not os.path.exists(path):
        sys.exit(f"{prog}: --checkpoint {path}: no such file")
    ck = torch.load(path, map_location="cpu")
    f = ck.get("args") if isinstance(ck, dict) else None
    if not isinstance(f, dict) or "model" not in ck:
        sys.exit(f"{prog}: {path} is not a train_avici.py checkpoint")
    net = TwinModel(f["d"], f["layers"], f["heads"], f["stats"] == "on", f["edge_layers"],
                    f.get("pair_rows", 0), f.get("pair_width", 16))
    try:
        net.load_state_dict(ck["model"])
    except RuntimeError as e:
        sys.exit(f"{prog}: {path} holds another model than this twin_model.py builds: "
                 f"{str(e).splitlines()[0]}")
    net.eval()
    return net, f


def predictor(net, f):
    """predict(batch) -> (G, N, N) probabilities: sigmoid of the model's
    logits, 0 on padded pairs and the diagonal."""
    def predict(b):
        with torch.no_grad():
            inp, gm = ta.model_inputs(b, f["rows"], "cpu", twin_rows=f.get("twin_rows") or None,
                                      feats=net.layers > 0, stats=net.stats, pair_rows=net.pair_rows)
            p = torch.sigmoid(net(inp).float())
            return torch.where(ta.pair_mask(inp["node_mask"], gm), p, torch.zeros_like(p))
    return predict


def auto_batch(cell):
    """32 graphs at 64 rows, scaled by rows squared: twin_stats builds an
    (S, S) kernel per node and graph, so a 1,000-row cell at 32 graphs needs
    ~24 GB; at 1 graph ~1.3 GB."""
    rows = int(cell.get("options", {}).get("samples", cell.get("rows", 64)))  # a real-data cell: its rows
    return max(1, 32 * 64 * 64 // (rows * rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="a train_avici.py --checkpoint file")
    ap.add_argument("--suite", required=True, help="a built suite (twincache-suite build DIR)")
    ap.add_argument("--cells", help="comma-separated cells (default: all)")
    ap.add_argument("--recipe", help="the suite's recipe: a file, or v1 / v2 (default: v1)")
    ap.add_argument("--name", help="the model's column (default: the checkpoint's file name)")
    ap.add_argument("--out", help="write OUT.json, OUT.md (OUT.png)")
    ap.add_argument("--batch", type=int, default=None,
                    help="graphs per batch (default: 32 at 64 rows, fewer for cells with more rows: "
                         "the model's statistics grow as rows squared per graph)")
    a = ap.parse_args()
    import twincache.suite as ts
    net, f = load_checkpoint(a.checkpoint)
    name = a.name or os.path.splitext(os.path.basename(a.checkpoint))[0]
    try:
        if a.batch is not None and a.batch < 1:
            sys.exit(f"score_suite.py: --batch {a.batch}: must be at least 1")
        rep = ts.score(predictor(net, f), a.suite, cells=a.cells, name=name,
                       batch_size=a.batch or auto_batch,
                       output="torch", recipe=ts.load_recipe(a.recipe))
    except ts.Error as e:
        sys.exit(f"score_suite.py: {e}")
    if a.out:
        paths, note = ts.write_report(rep, a.out)
        print("wrote " + ", ".join(paths) + (f" ({note})" if note else ""))
    else:
        sys.stdout.write(ts.markdown(rep))


if __name__ == "__main__":
    main()
