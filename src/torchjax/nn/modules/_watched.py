"""Dicts that count their changes: a module's parameters, buffers, submodules and hooks.

A compiled function's guard (torchjax.compiler._guard) checks, before every call, that the
modules it traced still have the same training flags, hooks, submodules, parameters and
buffers. Reading all of that costs a small step more than its program (the seed MLP's guard:
~5 µs of Python, ~15 µs of step time on XLA:CPU). Every change to it goes through these
dicts or through Module.__setattr__ / __delattr__ (any attribute: a forward reads its
module's numbers and flags too), which add one to CHANGES: while CHANGES holds the value
the guard last checked the modules at, nothing it would read has changed.
"""

from __future__ import annotations

from collections import OrderedDict

# the count of changes to any module's structure (one process-wide int: a change anywhere
# only makes the guards read their modules again)
CHANGES = [0]


def _counted(base, name):
    """Subclass `base` (dict or OrderedDict) with every mutating method counted; it prints
    as `base` does (PyTorch's modules show plain dicts and OrderedDicts)."""

    def wrap(method_name):
        method = getattr(base, method_name)

        def counted(self, *args, **kwargs):
            CHANGES[0] += 1
            return method(self, *args, **kwargs)
        counted.__name__ = method_name
        return counted

    names = ["__setitem__", "__delitem__", "__ior__", "pop", "popitem", "clear", "update",
             "setdefault"]
    if base is OrderedDict:
        names.append("move_to_end")
    ns = {n: wrap(n) for n in names}
    ns["__reduce__"] = lambda self: (type(self), (), None, None, iter(self.items()))
    ns["__repr__"] = lambda self: repr(base(self))
    ns["__module__"] = __name__
    ns["__qualname__"] = name
    return type(name, (base,), ns)


WatchedDict = _counted(dict, "WatchedDict")
WatchedOrderedDict = _counted(OrderedDict, "WatchedOrderedDict")


def watched(value):
    """value as a watched dict of its kind (a plain dict or OrderedDict assigned to a module's
    internals); anything else unchanged."""
    if type(value) is dict:
        return WatchedDict(value)
    if type(value) is OrderedDict:
        return WatchedOrderedDict(value)
    return value


def plain(value):
    """A watched dict as the plain dict or OrderedDict it stands for; anything else
    unchanged."""
    if isinstance(value, WatchedOrderedDict):
        return OrderedDict(value)
    if isinstance(value, WatchedDict):
        return dict(value)
    return value


# Module attributes whose dicts are kept watched when assigned
ATTRS = frozenset({"training", "__class__", "_parameters", "_buffers", "_modules",
                   "_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                   "_backward_pre_hooks"})
