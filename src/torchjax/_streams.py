"""torch.Stream and torch.Event, PyTorch's device-generic streams and events.

JAX orders the work on a device itself and has no user-visible streams, so, as
torch.accelerator.current_stream does, making one raises a clear error. The classes exist so
annotations and `isinstance(s, torch.Stream)` checks in device-generic code run (and are
False). To wait for queued work use torch.accelerator.synchronize(); to time it, call it
before reading time.perf_counter().
"""

from __future__ import annotations

from ._tensor import Tensor

__all__ = ["Stream", "Event"]


class Stream:
    """A device's work queue in PyTorch; JAX has none to hand out."""

    def __init__(self, device=None, *, priority: int = 0, **kwargs):
        raise RuntimeError("torch.Stream is not supported by torchjax: JAX orders work "
                           "without user-visible streams (use torch.accelerator.synchronize() "
                           "to wait for queued work)")


class Event:
    """A point in a stream's work in PyTorch; JAX has no streams to mark."""

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        raise RuntimeError("torch.Event is not supported by torchjax: JAX orders work "
                           "without user-visible streams, so there is nothing to record an "
                           "event in (use torch.accelerator.synchronize() and "
                           "time.perf_counter() to time work)")


Stream.__module__ = Event.__module__ = "torch"


def record_stream(self, stream) -> None:
    """Mark the tensor as used by `stream` (PyTorch's caching allocator then keeps its memory
    until the stream's work is done). JAX keeps a buffer alive until the work queued on it has
    finished, so on an accelerator there is nothing to record; CPU tensors raise as in
    PyTorch, which has no CPU kernel for it. (torchjax makes no stream objects, so any
    argument it can be given is rejected as PyTorch rejects a non-stream.)"""
    if not isinstance(stream, Stream):  # PyTorch's argument parser takes only a stream
        raise RuntimeError("unknown parameter type")
    if self.device.type == "cpu":
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the "
                                  "'CPU' backend (streams belong to accelerators)")


Tensor.record_stream = record_stream
