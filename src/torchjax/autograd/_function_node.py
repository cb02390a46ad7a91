"""The grad_fn of a custom Function. As in PyTorch it is also the ctx that forward and
backward receive, so `y.grad_fn.saved_tensors`, `y.grad_fn.needs_input_grad` and attributes
set on ctx are all read from the same object."""

from __future__ import annotations

import warnings
import weakref

import jax.numpy as jnp

from .._autograd.grad_mode import enable_grad, no_grad
from .._autograd.node import RELEASED_MSG, AccumulateGrad, Node, accumulator_of
from .._tensor import Tensor
from ._function_ctx import FunctionCtx

_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
         "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def short_name(node) -> str:
    """How PyTorch names a node in the saved-tensor error: MulBackward0 -> Mul."""
    name = node.name()
    i = name.rfind("Backward")
    return name[:i] if i > 0 else name


class SavedTensor:
    """One ctx.save_for_backward entry, checked against its version when unpacked.

    An output of the Function itself is kept as its values only (PyTorch does the same to
    avoid a cycle through the node); unpacking rebuilds a tensor whose grad_fn is the node,
    so a backward that uses it is differentiable again (create_graph). Under
    saved_tensors_hooks the entry keeps pack_hook's result instead, and no version check
    applies (the hook owns the values)."""

    __slots__ = ("tensor", "data", "counter", "version", "output_nr", "fn_name", "is_output",
                 "edge", "packed", "unpack_hook")

    def __init__(self, t: Tensor, node, hooks=None):
        self.counter = t._counter()
        self.version = t._version
        self.output_nr = t._output_nr
        fn = t._grad_fn
        self.fn_name = short_name(fn) if fn is not None else None
        self.is_output = fn is node
        self.tensor = self.data = self.edge = self.packed = self.unpack_hook = None
        if hooks is not None:
            self.packed = hooks[0](t)
            self.unpack_hook = hooks[1]
            if not self.is_output and t._requires_grad:
                self.edge = (fn, t._output_nr) if fn is not None else (accumulator_of(t), 0)
        elif self.is_output:
            self.data = t._data
        else:
            self.tensor = t

    def unpack(self, node) -> Tensor:
        if self.unpack_hook is not None:
            return self._unpack_hooked(node)
        if self.counter[0] != self.version:
            t = self.tensor if self.tensor is not None else Tensor._wrap(self.data)
            where = (f", which is output {self.output_nr} of {self.fn_name},"
                     if self.fn_name is not None else "")
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.type()} {list(t.shape)}]{where} is at version "
                f"{self.counter[0]}; expected version {self.version} instead. {_HINT}")
        if self.tensor is not None:
            return self.tensor
        return _with_edge(Tensor._wrap(self.data), (node, self.output_nr))

    def _unpack_hooked(self, node) -> Tensor:
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if self.is_output:
            return _with_edge(Tensor._wrap(t._data), (node, self.output_nr))
        if self.edge is None:
            return t
        # connected where the saved tensor was: its grad_fn, or its leaf's AccumulateGrad
        return _with_edge(Tensor._wrap(t._data), self.edge)


def _with_edge(t: Tensor, edge) -> Tensor:
    fn, nr = edge
    t._requires_grad = True
    if type(fn) is AccumulateGrad:
        t._acc = weakref.ref(fn)
    else:
        t._grad_fn, t._output_nr = fn, nr
    return t


class BackwardCFunction(Node, FunctionCtx):
    """Base of the generated `<Name>Backward` classes (one per Function subclass)."""

    __slots__ = ("_fn_saved", "_fn_arg_is_tensor", "_fn_input_meta", "_fn_out_meta",
                 "_fn_metadata")

    _forward_cls = None  # set on each generated subclass

    def __init__(self, needs_input_grad: tuple, arg_is_tensor: tuple):
        super().__init__(None, None, (), (), 0, has_saved=True)
        self._fn_saved = None
        self._fn_arg_is_tensor = arg_is_tensor
        self._fn_input_meta = ()   # per edge: (shape, dtype) of the tensor input
        self._fn_out_meta = ()     # per output: (shape, jax dtype), None for non-tensors
        self._fn_metadata = None
        self.needs_input_grad = needs_input_grad
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True

    # -- what the user sees -------------------------------------------------------------------

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        # PyTorch's custom-Function nodes are Python classes and print with their module path
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    @property
    def metadata(self) -> dict:
        if self._fn_metadata is None:
            self._fn_metadata = {}
        return self._fn_metadata

    @property
    def saved_tensors(self) -> tuple:
        if self._released:
            raise RuntimeError(RELEASED_MSG)
        saved = self._fn_saved
        if saved is None:
            return ()  # nothing saved, or still inside forward (saving happens after it)
        return tuple(None if s is None else s.unpack(self) for s in saved)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def _user_backward(self):
        from .function import Function
        cls = self._forward_cls
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return cls.vjp if cls.vjp is not Function.vjp else cls.backward

    def _call_user(self, grads):
        fn = self._user_backward()
        if getattr(self._forward_cls, "boxed_grads_call", False):
            return fn(self, list(grads))
        return fn(self, *grads)

    # -- the engine's interface ---------------------------------------------------------------

    def apply(self, *args, **kwargs):
        # Two callers share PyTorch's method name: the engine calls apply(cts: list,
        # retain_graph: bool); users call grad_fn.apply(*grads), which runs the user's
        # backward as is (PyTorch's BackwardCFunction.apply).
        if kwargs or (len(args) == 2 and type(args[0]) is list and type(args[1]) is bool):
            return self._engine_apply(*args, **kwargs)
        return self._call_user(args)

    def _engine_apply(self, cts, retain_graph: bool):
        grads = self._grad_outputs([None if c is None else Tensor._wrap(c) for c in cts])
        with no_grad():
            res = self._call_user(grads)
            out = self._check_grads(res)
        if not retain_graph:
            self.release()
        return [None if g is None else g._data for g in out]

    def apply_graph(self, cts):
        """create_graph=True: the user's backward runs with grad mode on, so what it computes
        is recorded and can be differentiated again (cts: a Tensor or None per output)."""
        grads = self._grad_outputs(list(cts))
        with enable_grad():
            res = self._call_user(grads)
            return self._check_grads(res)

    def release(self):
        self._fn_saved = None
        self._released = True

    def _grad_outputs(self, cts):
        """One gradient per forward output: None for non-tensor outputs, zeros (or None
        without materialize_grads) for outputs that received none."""
        materialize = self.materialize_grads
        out = []
        for ct, meta in zip(cts, self._fn_out_meta):
            if meta is None:
                out.append(None)
            elif ct is None:
                out.append(Tensor._wrap(jnp.zeros(*meta)) if materialize else None)
            else:
                out.append(ct)
        return out

    def _check_grads(self, res) -> list:
        """Validate backward's result as PyTorch does; one gradient per edge (None where no
        gradient flows), broadcast gradients summed to the input's shape, cast to its dtype."""
        name = self.name()
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self._fn_arg_is_tensor)
        if len(res) != n:
            if len(res) > n and all(r is None for r in res[n:]):
                res = res[:n]
            else:
                raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(res)})")
        out = [None] * len(self._edges)
        k = 0
        for i, g in enumerate(res):
            if not self._fn_arg_is_tensor[i]:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if g is not None and self._edges[k] is not None:
                out[k] = _conform(g, *self._fn_input_meta[k], k, name)
            k += 1
        return out


def _conform(g: Tensor, shape: tuple, dtype, index: int, name: str) -> Tensor:
    gshape = tuple(g.shape)
    if gshape != shape:
        if not _expandable(shape, gshape):
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - "
                               f"got {list(gshape)} but expected shape compatible with "
                               f"{list(shape)}")
        g = _sum_to(g, shape)
    if g.dtype is not dtype:
        if not (g.dtype.is_floating_point or g.dtype.is_complex == dtype.is_complex):
            raise RuntimeError(
                "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
                "grad_is_complex) to be true, but got false.  (Could this error message be "
                "improved?  If so, please report an enhancement request to PyTorch.)")
        g = g.to(dtype)
    return g


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether `shape` broadcasts to `target` (then a gradient of `target` sums back)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def _sum_to(g: Tensor, shape: tuple) -> Tensor:
    lead = g.dim() - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and g.shape[lead + i] != 1)
    if dims:
        g = g.sum(dim=dims, keepdim=True)
    return g.reshape(shape)


class _ErrorNode(Node):
    """PyTorch's Error node: differentiating through it raises its message (used by
    once_differentiable for the results of a backward run under create_graph)."""

    __slots__ = ("_msg",)

    def apply(self, cts, retain_graph: bool):
        raise RuntimeError(self._msg)

    def apply_graph(self, cts):
        raise RuntimeError(self._msg)


_ErrorNode.__name__ = _ErrorNode.__qualname__ = "Error"  # name() is torch::autograd::Error


def delayed_error(msg: str, outputs: tuple) -> tuple:
    """Aliases of `outputs` whose grad_fn raises `msg` when a backward reaches it."""
    leaves = []
    for v in outputs:
        if v is not None:
            leaf = Tensor._wrap(v._data)
            leaf._requires_grad = True
            leaves.append(leaf)
    node = _ErrorNode(None, None, tuple((accumulator_of(t), 0) for t in leaves), (),
                      len(outputs), has_saved=False)
    node._msg = msg
    res = []
    for k, v in enumerate(outputs):
        if v is None:
            res.append(None)
            continue
        t = Tensor._wrap(v._data)
        t._requires_grad = True
        t._grad_fn = node
        t._output_nr = k
        res.append(t)
    return tuple(res)
