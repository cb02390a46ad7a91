"""The fused backward: a graph structure seen before runs its whole backward as ONE program.

engine._run_fused decides when (a structure's second sighting, compiled on another thread);
this module makes the programs. Its pure backward (`backward_of`) also serves the program
that runs a pending forward and its backward together (_deferred_backward.py).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _programs
from .node import named_parts

_flatten = jax.tree_util.tree_flatten
_unflatten = jax.tree_util.tree_unflatten
try:  # the class of a concrete jax array, named without making one (importing torchjax
    # must not start the XLA backend)
    from jax._src.array import ArrayImpl as _CONCRETE
except ImportError:  # moved in a newer jax: no array is shared, each is its own argument
    _CONCRETE = None


def topological(parts):
    """A backward order over a structure's node indices: a node runs after all its users."""
    users = [0] * len(parts)
    for p in parts:
        if p is not None:
            for e in p[2]:
                if e is not None:
                    users[e[0]] += 1
    ready = [i for i, u in enumerate(users) if u == 0]
    order = []
    while ready:
        i = ready.pop()
        order.append(i)
        p = parts[i]
        if p is not None:
            for e in p[2]:
                if e is not None:
                    users[e[0]] -= 1
                    if users[e[0]] == 0:
                        ready.append(e[0])
    return order


class Fused:
    """The fused backward of one graph structure, called with the nodes' saved tuples.

    Each distinct saved array is ONE argument of its program: the repeated tree net's 31
    Linear nodes all save the same weight, and its backward took 125 arguments for 64
    distinct arrays (an argument of an XLA CPU call costs ~2 us here). Which saved leaves are
    the same array is part of the program's key (`sharing`): a pass whose arrays are shared
    otherwise gets a program of its own, never a wrong one."""

    __slots__ = ("key", "programs")

    def __init__(self, key):
        self.key = key  # engine's structure key: (root slots, implicit roots, parts)
        self.programs = {}  # sharing -> program

    def prepare(self, saved):
        """(the program for this sharing of the saved arrays, its distinct arguments)."""
        leaves, tree = _flatten(saved)
        args = []
        at = {}  # id of a concrete array -> its argument (the leaves keep the arrays alive)
        where = []
        for a in leaves:
            if a.__class__ is _CONCRETE:
                i = at.get(id(a))
                if i is None:
                    i = at[id(a)] = len(args)
                    args.append(a)
            else:  # a number, a tracer: an argument of its own, as before
                i = len(args)
                args.append(a)
            where.append(i)
        sharing = (tree, tuple(where))
        prog = self.programs.get(sharing)
        if prog is None:
            if len(self.programs) >= 8:  # (sharing that changes every pass stays bounded)
                self.programs.clear()
            prog = self.programs[sharing] = _program(self.key, sharing)
        return prog, tuple(args)

    def __call__(self, saved, root_grads):
        prog, args = self.prepare(saved)
        return prog(args, root_grads)


def backward_of(key):
    """The structure's whole backward as a pure function: (the saved tuple of each node that
    is not a leaf, in discovery order; the given root gradients) -> the leaves' gradients."""
    root_slots, implicit, parts = key
    order = topological(parts)
    saved_slot = {}  # node index -> position in the `saved` argument (discovery order)
    leaf_slot = {}   # leaf index -> position in the result
    for i, p in enumerate(parts):
        (leaf_slot if p is None else saved_slot)[i] = len(leaf_slot if p is None else saved_slot)

    def backward(saved, root_grads):
        bufs = [[None] * (1 if p is None else p[1]) for p in parts]

        def add(i, nr, g):
            prev = bufs[i][nr]
            bufs[i][nr] = g if prev is None else prev + g

        given = iter(root_grads)
        for (i, nr), ones in zip(root_slots, implicit):
            add(i, nr, jnp.ones(*ones) if ones is not None else next(given))
        out = [None] * len(leaf_slot)
        for i in order:
            p = parts[i]
            cts = bufs[i]
            if p is None:
                out[leaf_slot[i]] = cts[0]
                continue
            spec, _, edges = p
            if all(c is None for c in cts):
                continue
            grads = spec.pure(saved[saved_slot[i]], tuple(cts))
            for e_idx, g in zip(spec.edge_of, grads):
                e = edges[e_idx]
                if e is not None and g is not None:
                    add(e[0], e[1], g)
        return tuple(out)

    return backward


def _program(key, sharing):
    """One program running the structure's whole backward: (the distinct saved arrays and
    numbers, the given root gradients) -> the leaves' gradients."""
    tree, where = sharing
    backward = backward_of(key)

    def fused(args, root_grads):
        return backward(_unflatten(tree, [args[i] for i in where]), root_grads)

    return _programs.program(fused, ident(key, sharing, "fused"))


def ident(key, sharing, kind, *more):
    """The program cache's name for a program over a structure's backward: the structure,
    with each node's backward by its own ident (None when one of them has none), which saved
    leaves are which arguments, and `more`."""
    root_slots, implicit, parts = key
    named = named_parts(parts)
    return None if named is None else _programs.ident_of(
        kind, root_slots, implicit, named, str(sharing[0]), sharing[1], *more)
