"""Reading W ranks' Loaders in step, as a data-parallel job does: one batch
of every rank per step, resumed from one shared state. Shared by the
elastic-resume tests (test_resume.py, test_loader_mix.py)."""


def read_in_step(loaders, state, steps, take):
    """Loads `state` (None: from the start) into every loader, then reads
    `steps` steps (None: to the end) and returns (take(step) of each step
    concatenated, the last rank's state). The ranks must end together."""
    try:
        if state is not None:
            for L in loaders:
                L.load_state_dict(state)
        streams = [L.stream() for L in loaders]
        got, n = [], 0
        while steps is None or n < steps:
            step = [next(s, None) for s in streams]
            if step[0] is None:
                assert all(b is None for b in step), "the ranks end together"
                break
            got.extend(take(step))
            del step
            n += 1
        return got, loaders[-1].state_dict()
    finally:
        for L in loaders:
            L.close()
