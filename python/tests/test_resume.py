"""Resume state in Python: what state_dict() says right after load_state_dict(),
set_epoch() after a resume, states saved before "origin" existed, and elastic
resume — a run at world size 4 resumed at 2, then at 3, each world made of
new Loaders, reads every graph once per epoch in the uninterrupted order."""
import pytest

import twincache
from lockstep import read_in_step

RANGE = (0, 120)
EPOCHS = 3


def _order(batches):
    """{epoch: [graph ids of the valid places, in order]}."""
    out = {}
    for b in batches:
        ids = b.numpy["graph_id"][:b.n_graphs].tolist()
        valid = b.numpy["valid"][:b.n_graphs].tolist()
        out.setdefault(b.epoch, []).extend(i for i, v in zip(ids, valid) if v)
    return out


def _world(cache, batch_size, world_size, state, steps, kw):
    """Reads `steps` batches (None: to the end) from new Loaders of every rank
    in step; returns their batches in global order and the last rank's state."""
    loaders = [twincache.Loader(cache, batch_size=batch_size, world_size=world_size, rank=r,
                                index_range=RANGE, epochs=EPOCHS, output="numpy", **kw)
               for r in range(world_size)]

    def full(step):
        assert all(b.n_graphs == batch_size for b in step)
        return step
    return read_in_step(loaders, state, steps, full)


@pytest.mark.parametrize("kw", [dict(seed=7), dict(seed=7, samples="fresh", rows=3)])
def test_elastic_4_2_3(cache_path, kw):
    ref, _ = _world(cache_path, 20, 1, None, None, kw)
    want = _order(ref)
    # W 4 x G 5: 6 batches per epoch; 8 steps stop inside epoch 1
    a, s1 = _world(cache_path, 5, 4, None, 8, kw)
    assert s1["next_seq"] == 8 and s1["origin"] == 0 and s1["world_size"] == 4
    # W 2 x G 10 (the same global batch): 5 steps cross into epoch 2
    b, s2 = _world(cache_path, 10, 2, s1, 5, kw)
    assert s2["origin"] == 120 + 40 and s2["next_seq"] == 5
    c, _ = _world(cache_path, 7, 3, s2, None, kw)  # W 3 x G 7: padded, to the end
    got = _order(a + b + c)
    assert sorted(got) == list(range(EPOCHS))
    for e in range(EPOCHS):
        assert got[e] == want[e], f"epoch {e}: not each graph once in the uninterrupted order"
    if "rows" in kw:  # fresh worlds depend on (graph, epoch) only: the same bytes
        by = {(x.epoch, int(i)): x.numpy["base"][g].tobytes()
              for x in ref for g, i in enumerate(x.numpy["graph_id"][:x.n_graphs])}
        for x in a + b + c:
            for g in range(x.n_graphs):
                if x.numpy["valid"][g]:
                    key = (x.epoch, int(x.numpy["graph_id"][g]))
                    assert x.numpy["base"][g].tobytes() == by[key]


def test_state_dict_right_after_load(cache_path):
    kw = dict(batch_size=8, epochs=2, seed=3, index_range=RANGE, output="numpy")
    with twincache.Loader(cache_path, **kw) as L:
        it = L.stream()
        for _ in range(17):
            next(it)
        state = L.state_dict()
        del it
    assert state["next_seq"] == 17
    with twincache.Loader(cache_path, **kw) as L:
        L.load_state_dict(state)
        assert L.state_dict() == state  # nothing read yet: the state it was given
        assert next(L.stream()).seq == 17
    # at another world size the new stream counts from its origin
    with twincache.Loader(cache_path, world_size=3, rank=1, **kw) as L:
        L.load_state_dict(state)
        s = L.state_dict()
        assert s["next_seq"] == 0 and s["origin"] == 120 + 8 * 2
        b = next(L.stream())
        assert b.seq == 0 and b.epoch == 1
        assert L.state_dict()["next_seq"] == 1


def test_set_epoch_right_after_resume(cache_path):
    kw = dict(batch_size=8, epochs=3, seed=5, index_range=RANGE, output="numpy")
    with twincache.Loader(cache_path, **kw) as L:
        full = [(b.seq, b.epoch, b.numpy["graph_id"].tolist()) for b in L.stream()]
        bpe = len(L)
    first = {e: next(r for r in full if r[1] == e) for e in range(3)}
    with twincache.Loader(cache_path, **kw) as L:
        L.load_state_dict({"seed": 5, "next_seq": bpe + 3})  # inside epoch 1
        L.set_epoch(0)
        b = next(iter(L))
        assert (b.seq, b.epoch, b.numpy["graph_id"].tolist()) == first[0]
    with twincache.Loader(cache_path, **kw) as L:  # elastic, then back to epoch 0 and 2
        L2 = twincache.Loader(cache_path, world_size=2, rank=0, **kw)
        it = L2.stream()
        next(it)
        state = L2.state_dict()
        del it
        L2.close()
        L.load_state_dict(state)
        assert L.state_dict()["origin"] == 16
        L.set_epoch(0)
        b = next(iter(L))
        assert (b.seq, b.epoch, b.numpy["graph_id"].tolist()) == first[0]
        L.load_state_dict(state)
        L.set_epoch(2)
        b = next(iter(L))
        assert b.epoch == 2 and b.numpy["graph_id"].tolist() == first[2][2]
        assert len([x for x in L]) == bpe - 1  # the rest of epoch 2, then the end


def test_state_without_origin_is_read(cache_path):
    """A state saved before the "origin" key (version 1) resumes where it says."""
    kw = dict(batch_size=8, epochs=2, seed=3, index_range=RANGE, output="numpy")
    with twincache.Loader(cache_path, **kw) as L:
        full = [b.numpy["graph_id"].tolist() for b in L.stream()]
        state = L.state_dict()
    old = {k: v for k, v in state.items() if k != "origin"}
    old.update(version=1, next_seq=5)
    with twincache.Loader(cache_path, **kw) as L:
        L.load_state_dict(old)
        assert [b.numpy["graph_id"].tolist() for b in L.stream()] == full[5:]


def test_state_refused_with_reason(cache_path):
    kw = dict(batch_size=8, epochs=2, seed=3, index_range=RANGE, output="numpy")
    with twincache.Loader(cache_path, world_size=3, rank=1, **kw) as L:
        state = L.state_dict()
    with twincache.Loader(cache_path, world_size=2, drop_last=True, **kw) as L:
        with pytest.raises(twincache.InvalidArgument, match="drop_last"):
            L.load_state_dict(state)
        before = L.state_dict()
        assert L.state_dict() == before  # left where it was
    with twincache.Loader(cache_path, world_size=3, rank=1, **dict(kw, epochs=1)) as L:
        late = dict(state, next_seq=6)  # epoch 1 of a 2-epoch stream
        with pytest.raises(twincache.InvalidArgument, match="past the end"):
            L.load_state_dict(late)
