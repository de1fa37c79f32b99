"""A cache copy with one damaged frame: Cache[i] and corrupt='fail' raise
twincache.Corrupt; corrupt='skip' delivers a full epoch and reports the graph."""
import os
import shutil

import pytest

import twincache

VICTIM = 37


@pytest.fixture(scope="module")
def damaged(cache_path, tmp_root):
    dst = os.path.join(tmp_root, "damaged-cache")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(cache_path, dst)
    with twincache.Cache(dst) as c:
        frame = c.frame(VICTIM)
    data = os.path.join(dst, "data.mdb")
    with open(data, "r+b") as f:
        raw = f.read()
        at = raw.find(frame)
        assert at >= 0 and raw.find(frame, at + 1) < 0
        mid = at + len(frame) // 2
        f.seek(mid)
        f.write(bytes(b ^ 0x5A for b in raw[mid:mid + 4]))
    return dst


def test_reader_raises_corrupt(damaged):
    with twincache.Cache(damaged) as c:
        with pytest.raises(twincache.Corrupt) as e:
            c[VICTIM]
        assert str(VICTIM) in str(e.value) and e.value.code < 0
        c[VICTIM - 1], c[VICTIM + 1]  # the neighbours are intact


def test_loader_fail_and_skip(damaged):
    with twincache.Loader(damaged, batch_size=32, shuffle=False, threads=2) as L:
        with pytest.raises(twincache.Corrupt):
            for _ in L:
                pass
    with twincache.Loader(damaged, batch_size=32, shuffle=False, threads=2, corrupt="skip") as L:
        ids = [i for b in L for i in b.numpy["graph_id"][:b.n_graphs].tolist()]
        assert len(ids) == 600 and VICTIM not in ids
        assert [i for i, _ in L.corrupt] == [VICTIM] and L.stats()["corrupt"] == 1
