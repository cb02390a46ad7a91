"""Tensor subclasses that packages outside the core save and load.

PyTorch's torch.distributed.tensor allowlists its classes for weights-only loading when it is
imported; torchjax.distributed.tensor registers here the same way (the core never imports the
distributed package): how a DTensor is pickled, the PyTorch names its pickle stream uses, and
how a loaded one is rebuilt. The objects below stand for PyTorch's own in the stream.
"""

from __future__ import annotations

# tensor class -> fn(tensor, requires_grad) -> (callable, args): its pickle reduction
REDUCERS: dict = {}
# PyTorch's full name of a global -> what the unpickler gives for it
GLOBALS: dict = {}
# the class a wrapper subclass's stream names (a GLOBALS value) -> fn(meta, state) -> tensor
REBUILDERS: dict = {}
# tensor class -> fn(tensor, requires_grad) -> the Parameter a loaded one of it makes
PARAMETERS: dict = {}


def reducer_for(t, table=REDUCERS):
    for cls, fn in table.items():
        if isinstance(t, cls):
            return fn
    return None


class Construct:
    """An object PyTorch's unpickler makes as cls.__new__(cls, *args) and then fills with
    `state` (pickle's NEWOBJ and BUILD): how PyTorch's DTensorSpec, DeviceMesh and placements
    are pickled. `cls` is a TorchName."""

    __slots__ = ("cls", "args", "state")

    def __init__(self, cls, args=(), state=None):
        self.cls = cls
        self.args = tuple(args)
        self.state = state


class Call:
    """The result of calling a PyTorch global on `args` (pickle's REDUCE)."""

    __slots__ = ("func", "args")

    def __init__(self, func, args):
        self.func = func
        self.args = tuple(args)


class WrapperMeta:
    """What torch._utils._rebuild_wrapper_subclass is given: a subclass's global shape, dtype
    and device, before its state (the DTensor's local tensor and spec) arrives."""

    __slots__ = ("cls", "dtype", "size", "stride", "location", "requires_grad")

    def __init__(self, cls, dtype, size, stride, location, requires_grad):
        self.cls = cls
        self.dtype = dtype
        self.size = size
        self.stride = stride
        self.location = location
        self.requires_grad = requires_grad


class Record:
    """A PyTorch object of the stream the unpickler builds as data: the arguments its class
    was called with (`args`) and the attributes its state set. A registered rebuilder reads
    them; nothing of the file is called."""

    def __new__(cls, *args):
        obj = object.__new__(cls)
        obj.args = args
        return obj

    def __setstate__(self, state):
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        for part in (state, slots):
            for k, v in (part or {}).items():
                if isinstance(k, str) and k != "args":
                    self.__dict__[k] = v

    def __repr__(self):
        return f"{type(self).__name__}({self.args}, {self.__dict__})"


def record_type(full_name: str) -> type:
    """A Record class standing for PyTorch's class `full_name`."""
    return type(full_name.rpartition(".")[2], (Record,), {"full_name": full_name})
