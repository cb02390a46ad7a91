"""saved_tensors_hooks: what a node keeps for backward passes through user pack/unpack hooks.

While a (pack_hook, unpack_hook) pair is active, each tensor a new node saves is replaced by
pack_hook(tensor), and backward gets unpack_hook(packed) back. The node then holds a Packed
instead of its arrays; the engine unpacks it just before the node's backward runs (and never
fuses such a graph, so every unpack happens when PyTorch's would).
"""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self):
        self.stack = []           # (pack_hook, unpack_hook), innermost last
        self.disabled = None      # the error message while disable_saved_tensors_hooks is on


STATE = _State()


class Packed:
    """A node's saved tuple with each saved tensor replaced by what pack_hook returned."""

    __slots__ = ("layout", "items", "unpack")

    def __init__(self, layout, items, unpack):
        self.layout = layout  # the saved tuple with the packed slots set to None
        self.items = items    # [((i, j), packed)]
        self.unpack = unpack

    def values(self) -> tuple:
        saved = [list(a) if isinstance(a, tuple) else a for a in self.layout]
        for (i, j), packed in self.items:
            t = self.unpack(packed)
            arr = getattr(t, "_data", None)
            if arr is None:
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(t).__name__}")
            if j < 0:
                saved[i] = arr
            else:
                saved[i][j] = arr
        return tuple(tuple(a) if isinstance(a, list) else a for a in saved)


def pack(saved: tuple, tensors: tuple):
    """Apply the innermost pack hook to each saved tensor. `tensors` mirrors `saved` with the
    Tensor object behind each saved array (None where the value is not a tensor)."""
    pack_hook, unpack_hook = STATE.stack[-1]
    layout = [list(a) if isinstance(a, tuple) else a for a in saved]
    items = []
    for i, (a, t) in enumerate(zip(saved, tensors)):
        if isinstance(a, tuple):
            for j, (x, u) in enumerate(zip(a, t or ())):
                if x is not None and u is not None:
                    items.append(((i, j), pack_hook(u)))
                    layout[i][j] = None
        elif a is not None and t is not None:
            items.append(((i, -1), pack_hook(t)))
            layout[i] = None
    if not items:
        return saved
    return Packed(tuple(tuple(a) if isinstance(a, list) else a for a in layout), items,
                  unpack_hook)
