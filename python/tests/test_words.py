"""What a user reads is true: the README's Python example runs as written;
help texts list what the parsers accept; the Loader's messages name its own
keywords, not the C option fields; bool and integer options are told apart."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import twincache

from conftest import BUILD, REPO, package_env, program


def readme_python_blocks():
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_example_runs_as_written(tmp_root):
    blocks = readme_python_blocks()
    assert blocks, "README.md has no ```python block"
    work = os.path.join(tmp_root, "readme-example")
    os.makedirs(work, exist_ok=True)
    for k, code in enumerate(blocks):
        # a fresh interpreter in an empty directory: the block's imports and
        # names must all be its own
        p = subprocess.run([sys.executable, "-c", code], cwd=work, env=package_env(),
                           capture_output=True, text=True)
        assert p.returncode == 0, f"README python block {k} failed:\n{code}\n{p.stderr[-3000:]}"


def test_inspect_help_lists_every_export_format(inspect_exe):
    top = subprocess.run([inspect_exe, "--help"], capture_output=True, text=True)
    export = subprocess.run([inspect_exe, "export", "--help"], capture_output=True, text=True)
    line = next(s for s in (top.stdout + top.stderr).splitlines() if s.strip().startswith("export"))
    listed = re.search(r"--format (\S+)", line).group(1).split("|")
    accepted = re.search(r"--format (\S+)", export.stdout + export.stderr).group(1).split("|")
    assert listed == accepted and len(accepted) >= 4, (listed, accepted)


def test_batch_help_says_every_kind():
    doc = twincache.Batch.__doc__
    for words in ("0 = do", "1 = shift", "2 = noise", "3 = soft", "RAW units", "--standardize", "--iscm"):
        assert words in doc, words
    flat = " ".join(doc.split())  # a soft world's value on a root is its new mean (FORMAT.md 3.6)
    assert "value is 0, except on a root" in flat and "value the root's new mean" in flat


def test_fresh_without_rows_says_so_in_python(cache_path):
    with pytest.raises(twincache.InvalidArgument) as e:
        twincache.Loader(cache_path, samples="fresh")
    assert 'samples="fresh" needs rows=S' in str(e.value)
    assert "option" not in str(e.value)
    with pytest.raises(twincache.InvalidArgument) as e:
        twincache.Loader(cache_path, rows=8)
    assert 'rows=8 needs samples="fresh"' in str(e.value)
    with pytest.raises(twincache.InvalidArgument) as e:
        twincache.Loader(cache_path, samples="fresh", rows=70000)
    assert 'rows must be 1..65535 with samples="fresh" (got 70000)' in str(e.value)


def test_bools_and_integers_told_apart(cache_path):
    # numpy's bools are bools (np.array(...).any() gives one) ...
    with twincache.Loader(cache_path, batch_size=np.int64(50), shuffle=np.True_, drop_last=np.False_,
                          withhold_targets=np.True_, output="numpy") as L:
        assert L.shuffle is True and L.withhold_targets is True and L.drop_last is False
        b = next(iter(L))
        assert b.numpy["base"].shape[0] == 50 and not b.numpy["target"].any()
    # ... and never integers; integers are never bools
    for kw in (dict(batch_size=True), dict(batch_size=np.True_), dict(threads=True), dict(epochs=False),
               dict(rows=np.True_, samples="fresh"), dict(shuffle=1), dict(withhold_targets=0),
               dict(drop_last="no"), dict(pin_memory=1)):
        with pytest.raises(twincache.InvalidArgument) as e:
            twincache.Loader(cache_path, **kw)
        name = next(iter(k for k in kw if k != "samples"))
        assert name in str(e.value)


def test_loader_bench_usage_errors_exit_2(cache_path):
    bench = program("twincache-loader-bench", os.path.join(BUILD, "bench", "twincache-loader-bench"))
    p = subprocess.run([bench, "--cache", cache_path, "--layout", "scm", "--threads", "1", "--no-baselines"],
                       capture_output=True, text=True)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "fresh" in p.stderr.lower() and p.stderr.count("\n") == 1, p.stderr
