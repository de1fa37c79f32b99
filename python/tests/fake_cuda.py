"""torch.cuda's streams and events replaced by CPU stand-ins, so the device
path's ordering logic runs in CI: the CPU is the "device" and work on it is
done when queued. LateEvent is a copy that completes only when the test (or a
synchronize()) says so; FakeStream records what it was asked to wait for."""
import contextlib

import torch


class FakeEvent:
    def record(self, stream=None):
        self.stream = stream

    def query(self):
        return True

    def synchronize(self):
        pass


class LateEvent(FakeEvent):
    """An event whose work completes only when complete() or synchronize() runs."""

    def __init__(self):
        self.done = False
        self.waited = False

    def query(self):
        return self.done

    def complete(self):
        self.done = True

    def synchronize(self):
        self.waited = True
        self.done = True


class FakeStream:
    def __init__(self, device=None):
        self.waited_for = []

    def wait_event(self, event):
        self.waited_for.append(event)

    def record_event(self, event=None):
        event = event or FakeEvent()
        event.record(self)
        return event


def install(monkeypatch):
    """Replaces torch.cuda's stream and event API for the test's duration;
    returns the stream torch.cuda.current_stream() gives."""
    current = FakeStream()
    monkeypatch.setattr(torch.cuda, "Stream", FakeStream)
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "stream", lambda s: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: current)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    return current
