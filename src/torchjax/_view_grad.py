"""Autograd through in-place writes into views (PyTorch's CopySlices and regenerated views).

An in-place op on a view changes its base. As in PyTorch, the base gets one node,
CopySlices, that differentiates the whole update

    base_new = write(chain, base_old, op(read(chain, base_old), *other_args))

with respect to the old base and the op's other inputs. Every live view of the base then
reads from the new base: its grad_fn becomes a view node (AsStridedBackward0) whose edge is
the base's node, so gradients through any view, taken before or after the write, reach the
values that were really written.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _programs
from ._autograd.node import Node, accumulator_of, node_class
from ._views import _apply_chain, _write, chain_name


class _COPY_SLICES(Node):
    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # what PyTorch's C++ node reports


_COPY_SLICES.__name__ = _COPY_SLICES.__qualname__ = "CopySlices"
_VIEW_NODE = node_class("AsStridedBackward0")


class FunctionSpec:
    """The backward of fn(*args) for the argument positions in `diff`, in the interface the
    engine expects of a node's spec (pure, jit, edge_of, run). `unsaved` lists positions
    whose values the gradient does not read: (position, shape, dtype), zeros stand in."""

    # ident: what names this backward for the program cache (None: it is not named)
    __slots__ = ("pure", "jit", "edge_of", "n_edges", "slots", "ident")

    def __init__(self, fn, diff: tuple, unsaved: tuple, n_edges: int, ident=None):
        self.edge_of = diff
        self.n_edges = n_edges
        self.slots = tuple((i, -1, i) for i in diff)

        def pure(saved, cts):
            args = list(saved)
            for i, shape, dtype in unsaved:
                args[i] = jnp.zeros(shape, dtype)

            def g(*d):
                a = list(args)
                for i, v in zip(diff, d):
                    a[i] = v
                return fn(*a)

            _, vjp = jax.vjp(g, *(args[i] for i in diff))
            return vjp(cts[0])

        from ._pure import pytorch_complex_convention
        self.pure = pytorch_complex_convention(pure)
        self.ident = ident and _programs.ident_of("function backward", ident, diff, unsaved,
                                                  n_edges)
        self.jit = _programs.program(self.pure, self.ident)

    def run(self, saved, cts):
        return run_spec(self, saved, cts)


def run_spec(spec, saved, cts):
    """A spec's gradients laid out per edge (None where no gradient flows)."""
    grads = spec.jit(saved, tuple(cts))
    res = [None] * spec.n_edges
    for k, g in zip(spec.edge_of, grads):
        res[k] = g
    return res


_SPECS: dict = {}


def _edge(t):
    if not t._requires_grad:
        return None
    fn = t._grad_fn
    return (fn, t._output_nr) if fn is not None else (accumulator_of(t), 0)


def record_copy_slices(view, op_key, op_pure, dyn, arrays, versions):
    """Give the base of `view` a CopySlices node for the in-place op just written through
    the view. `op_pure(*arrays)` is the op with the view's values first; `arrays` holds the
    op's inputs as passed (the view's old values first), `dyn` the same as given by the user;
    `op_key` identifies op_pure for caching."""
    from ._tensor import Tensor

    base = view._base
    chain = view._view_chain
    edges = (_edge(base),) + tuple(_edge(v) if isinstance(v, Tensor) else None
                                   for v in dyn[1:])
    diff = tuple(i for i, e in enumerate(edges) if e is not None)
    key = (op_key, chain, diff, len(edges))
    spec = _SPECS.get(key)
    if spec is None:
        def update(b, *rest):
            return _write(chain, b, op_pure(_apply_chain(chain, b), *rest))

        prep, stat, cd, out_cast = op_key
        name = chain_name(chain)
        # (the op as dispatch names its forward program: _dispatch.py)
        ident = None if name is None else _programs.ident_of(
            "copy slices", prep.op.name, prep.op.fn, stat, tuple(map(type, stat)), cd,
            out_cast, name)
        spec = _SPECS[key] = FunctionSpec(update, diff, (), len(edges), ident)
    # the old base's values, before view._write replaced them
    saved = (base._data,) + tuple(arrays[1:])
    return _COPY_SLICES(spec, saved, edges, tuple(versions), 1, has_saved=True)


def regenerate_views(base) -> None:
    """After `base` got a new grad_fn, every live view of it reads from the new version."""
    if not base._views:
        return
    edge = (base._grad_fn, base._output_nr)
    av = base._data.aval
    for ref in base._views:
        v = ref()
        if v is None or v._detached:  # detach()/.data aliases keep no history
            continue
        key = ("view", v._view_chain, av.shape, av.dtype)
        spec = _SPECS.get(key)
        if spec is None:
            chain = v._view_chain
            name = chain_name(chain)
            spec = _SPECS[key] = FunctionSpec(
                lambda b, chain=chain: _apply_chain(chain, b), (0,), ((0, av.shape, av.dtype),),
                1, None if name is None else _programs.ident_of("view", name))
        v._grad_fn = _VIEW_NODE(spec, (None,), (edge,), (), 1, has_saved=False)
        v._output_nr = 0
        v._requires_grad = True
