"""autograd.Function: user-defined ops with a Python forward and backward."""

from __future__ import annotations

import jax.numpy as jnp

from .._autograd.grad_mode import STATE, no_grad
from .._autograd.node import RELEASED_MSG, Node, accumulator_of
from .._tensor import Tensor


class FunctionCtx:
    """The ctx passed to forward and backward: saved tensors and flags."""

    def __init__(self):
        self._saved = ()
        self._saved_versions = ()
        self._released = False
        self.needs_input_grad = ()
        self._non_differentiable = set()
        self._materialize_grads = True

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is "
                                f"of type {type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple((t._counter(), t._version) if t is not None else None
                                     for t in tensors)

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(RELEASED_MSG)
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and v[0][0] != v[1]:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{t.type()} {list(t.shape)}], is at version "
                    f"{v[0][0]}; expected version {v[1]} instead.")
        return tuple(self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool):
        self._materialize_grads = bool(value)

    def mark_dirty(self, *tensors):
        pass


class _FunctionNode(Node):
    """The grad_fn of a custom Function: calls the user's backward with Tensors."""

    __slots__ = ("_fn_cls", "_ctx", "_n_inputs", "_input_pos", "_out_avals")

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        # PyTorch's custom-Function nodes are Python classes and print with their module path
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def apply(self, cts, retain_graph: bool):
        if self._released:
            raise RuntimeError(RELEASED_MSG)
        ctx = self._ctx
        grads_in = []
        for ct, (shape, dt) in zip(cts, self._out_avals):
            if ct is None:
                grads_in.append(Tensor._wrap(jnp.zeros(shape, dt))
                                if ctx._materialize_grads else None)
            else:
                grads_in.append(Tensor._wrap(ct))
        with no_grad():
            res = self._fn_cls.backward(ctx, *grads_in)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) != self._n_inputs:
            if len(res) > self._n_inputs and all(r is None for r in res[self._n_inputs:]):
                res = res[:self._n_inputs]
            else:
                raise RuntimeError(f"function {self._fn_cls.__name__}Backward returned an "
                                   f"incorrect number of gradients (expected {self._n_inputs}, "
                                   f"got {len(res)})")
        out = []
        for pos in self._input_pos:
            g = res[pos]
            out.append(None if g is None else g._data)
        if not retain_graph:
            ctx._released = True
            self._released = True
        return out


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._node_cls = type(f"{name}Backward", (_FunctionNode,), {"__slots__": ()})


class Function(metaclass=_FunctionMeta):
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call .apply."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        record = STATE.grad_enabled and any(ctx.needs_input_grad)
        outs = out if isinstance(out, tuple) else (out,)
        if not record:
            return out
        edges, input_pos = [], []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                if a._requires_grad:
                    e = (a._grad_fn, a._output_nr) if a._grad_fn is not None else (
                        accumulator_of(a), 0)
                else:
                    e = None
                edges.append(e)
                input_pos.append(i)
        node = cls._node_cls(None, None, tuple(edges), (), len(outs), has_saved=True)
        node._fn_cls = cls
        node._ctx = ctx
        node._n_inputs = len(args)
        node._input_pos = tuple(input_pos)
        node._out_avals = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor)
                                else ((), jnp.float32) for o in outs)
        wrapped = []
        for k, o in enumerate(outs):
            if isinstance(o, Tensor):
                if any(o is a for a in args) or o._base is not None:
                    o = Tensor._wrap(o._data)
                if id(o) not in ctx._non_differentiable and (
                        o.dtype.is_floating_point or o.dtype.is_complex):
                    o._requires_grad = True
                    o._grad_fn = node
                    o._output_nr = k
            wrapped.append(o)
        return tuple(wrapped) if isinstance(out, tuple) else wrapped[0]
