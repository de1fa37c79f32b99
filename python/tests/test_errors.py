"""Every exception raised for a failing C call carries exactly the message
that call left (twincache_last_error), one line naming the file, option or
graph concerned (issue 20)."""
import os
import shutil

import pytest

import twincache
from twincache.errors import last_error

VICTIM = 21


def _exact(excinfo, *names):
    msg = str(excinfo.value)
    assert msg == excinfo.value.message == last_error()  # C's text, untouched
    assert msg and "\n" not in msg
    for name in names:
        assert name in msg, (name, msg)
    return msg


def test_missing_cache(tmp_root):
    missing = os.path.join(tmp_root, "errors-no-such-cache")
    with pytest.raises(twincache.NotFound) as e:
        twincache.Cache(missing)
    _exact(e, missing, "no such cache directory")
    with pytest.raises(twincache.NotFound) as e:
        next(iter(twincache.Loader(missing, output="numpy")))
    _exact(e, missing, "cannot open cache")


def test_not_a_cache(tmp_root):
    empty = os.path.join(tmp_root, "errors-empty-dir")
    os.makedirs(empty, exist_ok=True)
    with pytest.raises(twincache.NotACache) as e:
        twincache.Cache(empty)
    _exact(e, empty, "data.mdb")


def test_bad_option(cache_path):
    """A loader option's message is C's, the option named as the Loader's
    keyword (C's "option index_end" is Python's index_range end)."""
    with pytest.raises(twincache.InvalidArgument) as e:
        next(iter(twincache.Loader(cache_path, index_range=(0, 10**9), output="numpy")))
    msg = str(e.value)
    assert msg == e.value.message == twincache._args.python_words(last_error())
    assert "option index_end" in last_error() and "\n" not in msg
    assert "index_range end" in msg and str(10**9) in msg and "option" not in msg


@pytest.fixture(scope="module")
def damaged(cache_path, tmp_root):
    dst = os.path.join(tmp_root, "errors-damaged-cache")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(cache_path, dst)
    with twincache.Cache(dst) as c:
        frame = c.frame(VICTIM)
    with open(os.path.join(dst, "data.mdb"), "r+b") as f:
        raw = f.read()
        at = raw.find(frame) + len(frame) // 2
        f.seek(at)
        f.write(bytes(b ^ 0x5A for b in raw[at:at + 4]))
    return dst


def test_damaged_record(damaged):
    with twincache.Cache(damaged) as c:
        with pytest.raises(twincache.Corrupt) as e:
            c[VICTIM]
        _exact(e, damaged, f"graph {VICTIM}", "frame")
    with pytest.raises(twincache.Corrupt) as e:
        for _ in twincache.Loader(damaged, batch_size=32, shuffle=False, threads=1, output="numpy"):
            pass
    _exact(e, damaged, f"graph {VICTIM}", "frame")
