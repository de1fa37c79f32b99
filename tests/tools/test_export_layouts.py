"""test_export_layouts — `twincache-inspect export --format dcdi|causica`
re-read the way those tools read them, compared with `show --json`.

DCDI (dcdi/data.py, DataManagerFile.load_data): DAG{i}.npy (edge i -> j at
[i][j]), data{i}.npy the observational rows, data_interv{i}.npy every row
with the observational ones first, intervention{i}.csv read with csv.reader
(one row per data row, its 0-based targets, empty when observational),
regime{i}.csv read with np.genfromtxt(delimiter=",") (0 = observational).
causica (causica/datasets/causica_dataset_format.py): variables.json,
train.csv and adj_matrix.csv read with np.loadtxt(delimiter=","),
counterfactuals.json environments (do() worlds only).
Floats must be the float32 values bit for bit.
usage: python3 test_export_layouts.py GEN INSPECT SCRATCH"""
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np

gen, inspect, scratch = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p.stdout


def f32(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32)


def same_bits(a, b):
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
caches = {
    "do": ["--intervention", "do"],
    "shift": ["--intervention", "shift", "--targets", "3", "--standardize"],
    "noise": ["--intervention", "noise", "--targets", "2", "--values", "0.2:3"],
    "soft": ["--intervention", "soft", "--targets", "2", "--mechanism", "mlp"],
    "multi": ["--intervention", "do", "--targets", "3", "--targets-per-world", "2:3"],
}
for name, extra in caches.items():
    cache = os.path.join(scratch, name)
    run(gen, "--out", cache, "--graphs", "6", "--seed", "5", "--nodes", "3:7", "--samples", "9",
        "--quiet", *extra)
    for index in (0, 5):
        truth = json.loads(run(inspect, "show", cache, str(index), "--json"))
        n, s_n, k_n = truth["n_nodes"], truth["n_samples"], truth["n_inter"]
        adj = np.array(truth["adjacency"], dtype=np.uint8)
        base = f32(truth["base"]).reshape(s_n, n)
        inter = f32(truth["inter"]).reshape(k_n, s_n, n)
        tag = f"{name} graph {index}"

        # ---- DCDI, i_dataset 2 -------------------------------------------
        d = os.path.join(scratch, f"dcdi-{name}-{index}")
        run(inspect, "export", cache, str(index), "--format", "dcdi", "--out", d, "--dataset", "2")
        dag = np.load(os.path.join(d, "DAG2.npy"))
        check(dag.shape == (n, n) and np.array_equal(dag, adj), f"{tag}: DAG2.npy")
        check(same_bits(np.load(os.path.join(d, "data2.npy")), base), f"{tag}: data2.npy")
        data = np.load(os.path.join(d, "data_interv2.npy"))
        check(same_bits(data, np.concatenate([base, inter.reshape(k_n * s_n, n)])), f"{tag}: data_interv2.npy")
        with open(os.path.join(d, "intervention2.csv")) as f:
            masks = [[int(x) for x in row] for row in csv.reader(f)]
        # a multi-target world's row lists every target, comma-separated
        want = [[]] * s_n + [list(ts) for ts in truth["target_sets"] for _ in range(s_n)]
        check(masks == want, f"{tag}: intervention2.csv")
        regimes = np.genfromtxt(os.path.join(d, "regime2.csv"), delimiter=",").astype(int)
        check(list(regimes) == [0] * s_n + [k + 1 for k in range(k_n) for _ in range(s_n)],
              f"{tag}: regime2.csv")
        check(len(masks) == data.shape[0] == regimes.shape[0], f"{tag}: one mask and regime per row")
        # every row of a regime k+1 differs from the base row only on its
        # target's descendants: the twin property survives the export
        # (checked by show's own tests); here: regime 0 rows are the base
        check(same_bits(data[regimes == 0], base), f"{tag}: regime 0 is the observational data")

        # ---- causica ------------------------------------------------------
        c = os.path.join(scratch, f"causica-{name}-{index}")
        run(inspect, "export", cache, str(index), "--format", "causica", "--out", c)
        with open(os.path.join(c, "variables.json")) as f:
            variables = json.load(f)["variables"]
        check([v["name"] for v in variables] == [f"x{j}" for j in range(n)] and
              all(v["type"] == "continuous" and v["group_name"] == v["name"] for v in variables),
              f"{tag}: variables.json")
        train = np.loadtxt(os.path.join(c, "train.csv"), delimiter=",", ndmin=2)
        check(same_bits(f32(train), base), f"{tag}: train.csv")
        check(np.array_equal(np.loadtxt(os.path.join(c, "adj_matrix.csv"), dtype=int, delimiter=",", ndmin=2),
                             adj), f"{tag}: adj_matrix.csv")
        with open(os.path.join(c, "counterfactuals.json")) as f:
            cf = json.load(f)
        check(cf["metadata"]["columns_to_nodes"] == list(range(n)), f"{tag}: columns_to_nodes")
        dos = [k for k in range(k_n) if truth["kinds"][k] == "do"]
        envs = cf["environments"]
        check(len(envs) == len(dos), f"{tag}: {len(envs)} environments for {len(dos)} do() worlds")
        for e, k in zip(envs, dos):
            t = truth["targets"][k]
            check(e["intervention_idxs"] == truth["target_sets"][k], f"{tag}: world {k} targets")
            check(same_bits(f32(e["conditioning_values"]), base), f"{tag}: world {k} factual rows")
            test = f32(e["test_data"])
            check(same_bits(test, inter[k]), f"{tag}: world {k} counterfactual rows")
            for t in truth["target_sets"][k]:
                check(np.all(test[:, t] == test[0, t]), f"{tag}: world {k} one value at target {t}")

# refusals: an existing export without --force, --dataset off dcdi
d = os.path.join(scratch, "dcdi-do-0")
p = subprocess.run([inspect, "export", os.path.join(scratch, "do"), "0", "--format", "dcdi", "--out", d,
                    "--dataset", "2"], capture_output=True, text=True)
check(p.returncode == 1 and "exists" in p.stderr, f"existing export: exit {p.returncode}: {p.stderr}")
p = subprocess.run([inspect, "export", os.path.join(scratch, "do"), "0", "--format", "npy", "--out", d,
                    "--dataset", "2"], capture_output=True, text=True)
check(p.returncode == 2 and "--dataset" in p.stderr, f"--dataset with npy: exit {p.returncode}: {p.stderr}")
p = subprocess.run([inspect, "export", os.path.join(scratch, "do"), "0", "--format", "dcdi", "--out", d,
                    "--dataset", "0"], capture_output=True, text=True)
check(p.returncode == 2 and "--dataset" in p.stderr, f"--dataset 0: exit {p.returncode}: {p.stderr}")

if failures:
    print(f"test_export_layouts: {len(failures)} check(s) failed")
    sys.exit(1)
shutil.rmtree(scratch, ignore_errors=True)
print("test_export_layouts: ok")
