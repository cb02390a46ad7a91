"""Gradients that stay stacked between batched backward calls (batched.py).

A batched call computes one gradient per member as one (bucket, ...) array. Returning each
row as an array of its own costs an output buffer per row (measured: each output of a jitted
call costs several times an input), and the next level's batched call would stack them again.
So a member's gradient is kept as a Row: (its Rows, its index). A batched call that consumes
rows takes the few stacks they come from and an index array, and gathers inside the program.
Whatever needs a real array (a leaf's .grad, a node run alone, a sum of several gradients)
asks Row.value(), which splits the whole stack once, in one call.
"""

from __future__ import annotations

import jax

from .. import _programs


def _unstack_all(stack):
    return tuple(stack[m] for m in range(stack.shape[0]))


_unstack = _programs.lazy_jit(_unstack_all)


_ROW_AVALS: dict = {}  # a stack's aval -> its rows' aval


class Rows:
    """The (bucket, ...) gradients of one output of one batched call."""

    __slots__ = ("stack", "row_aval", "_split")

    def __init__(self, stack):
        self.stack = stack
        av = stack.aval
        row = _ROW_AVALS.get(av)
        if row is None:  # (making an aval costs tens of microseconds: once per stack aval)
            row = _ROW_AVALS[av] = jax.core.ShapedArray(av.shape[1:], av.dtype,
                                                         weak_type=av.weak_type)
        self.row_aval = row
        self._split = None

    def row(self, m):
        split = self._split
        if split is None:
            split = self._split = _unstack(self.stack)
        return split[m]


class Row:
    """Member m's gradient inside a Rows stack."""

    __slots__ = ("rows", "m")

    def __init__(self, rows, m):
        self.rows = rows
        self.m = m

    @property
    def aval(self):
        return self.rows.row_aval

    def value(self):
        return self.rows.row(self.m)


def concrete(g):
    """An array for a gradient that may be a Row."""
    return g.value() if g.__class__ is Row else g
