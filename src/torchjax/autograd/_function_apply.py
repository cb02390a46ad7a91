"""Function.apply's steps around the user's forward: binding keyword arguments, giving the
outputs their history (PyTorch's _wrap_outputs rules) and saving tensors for backward."""

from __future__ import annotations

import inspect
import warnings

from .._autograd import saved_hooks
from .._autograd.node import accumulator_of
from .._tensor import Tensor, _alias
from ._function_node import SavedTensor

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def bind_keywords(forward, args: tuple, kwargs: dict, skip_ctx: bool) -> tuple:
    """Keyword arguments become positional ones by the names of forward's parameters, as
    PyTorch's C++ apply does: no defaults are filled in, so every position up to the last
    named one must be given."""
    if not kwargs:
        return args
    params = list(inspect.signature(forward).parameters.values())
    if skip_ctx:
        params = params[1:]
    names = [p.name for p in params if p.kind in _POSITIONAL]
    given = {}
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{key}'")
        i = names.index(key)
        if i < len(args):
            raise TypeError(f"forward() got multiple values for argument '{key}'")
        given[i] = value
    out = list(args)
    for i in range(len(args), max(given) + 1):
        if i not in given:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
        out.append(given[i])
    return tuple(out)


def _tensors(values, what: str) -> tuple:
    if values is None:
        return ()
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            if what == "mark_dirty":
                raise RuntimeError(f"mark_dirty can only accept variables, but argument {i} is "
                                   f"of type {type(v).__name__}")
            raise RuntimeError("mark_non_differentiable only accepts variable arguments, but "
                               f"got {type(v).__name__}")
    return tuple(values)


def is_autograd_view(t: Tensor) -> bool:
    return t._autograd_view()


def _edge(t: Tensor):
    if not t._requires_grad:
        return None
    return (t._grad_fn, t._output_nr) if t._grad_fn is not None else (accumulator_of(t), 0)


def _set_edge(t: Tensor, node, k: int) -> None:
    t._requires_grad = True
    t._grad_fn = node
    t._output_nr = k


def finish_forward(node, args: tuple, out, executable: bool):
    """Everything after forward returned `out`: the outputs the caller gets."""
    is_tuple = isinstance(out, tuple)
    outs = out if is_tuple else (out,)
    dirty = _tensors(node.dirty_tensors, "mark_dirty")
    non_diff = {id(t) for t in _tensors(node.non_differentiable, "mark_non_differentiable")}
    inputs = [a for a in args if isinstance(a, Tensor)]
    input_ids = {id(a) for a in inputs}
    out_ids = {id(o) for o in outs if isinstance(o, Tensor)}
    for t in dirty:
        t._counter()[0] += 1  # a dirty tensor is a new version, as PyTorch's mark_dirty bumps it
        if id(t) not in input_ids:
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                          "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                          UserWarning, stacklevel=3)
    if any(id(t) not in out_ids for t in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be "
                           "outputs of the Function.")
    dirty_ids = {id(t) for t in dirty}
    if executable:
        node._edges = tuple(_edge(a) for a in inputs)
        node._fn_input_meta = tuple((tuple(a.shape), a.dtype) for a in inputs)
    node._n_out = len(outs)
    node._fn_out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None
                              for o in outs)
    position = {id(a): i for i, a in enumerate(inputs)}
    wrapped = [_output(node, k, o, executable, len(outs), position.get(id(o)),
                       id(o) in dirty_ids, id(o) in non_diff) if isinstance(o, Tensor) else o
               for k, o in enumerate(outs)]
    _save(node, executable)
    return tuple(wrapped) if is_tuple else wrapped[0]


def _output(node, k, o, executable, n_out, input_pos, is_dirty, non_diff) -> Tensor:
    """One tensor output's history (PyTorch's set_history in _wrap_outputs); input_pos is
    its index among the tensor inputs when the output is one of them."""
    is_input = input_pos is not None
    if not (executable and not non_diff and (o.dtype.is_floating_point or o.dtype.is_complex)):
        if not o._requires_grad:
            return _alias(o, share_version=True) if is_input and not is_dirty else o
        if is_input:
            return o.detach()  # an alias without history; the input keeps its own
        if not is_autograd_view(o):
            o._grad_fn, o._requires_grad, o._output_nr = None, False, 0
        return o
    if is_dirty:
        if o._grad_fn is None and o._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")
        o._grad = None
        o._hooks = None
        if is_autograd_view(o):
            if n_out > 1:
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another "
                    "Tensor, your Function cannot return more than one Tensor. This is not "
                    "supported by the current autograd engine. You should either make sure the "
                    "input is not a view (using .clone() for example) or make your Function "
                    "only return one Tensor (potentially splitting it into two Functions: one "
                    "doing the inplace that returns a single Tensor and a second one that does "
                    "the other operations). You can ask on the forum "
                    "https://discuss.pytorch.org/ if you need help to do this change.")
            from ._function_views import rebase_dirty_view
            rebase_dirty_view(o, node, input_pos)
            return o
        _set_edge(o, node, k)
        return o
    if is_input:
        # an input returned as is: the output is a new view of it that carries the node
        o = _alias(o, share_version=True)
    _set_edge(o, node, k)
    return o


def _save(node, executable: bool) -> None:
    to_save = node.to_save
    node.to_save = None
    if to_save is None:
        return
    for i, t in enumerate(to_save):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of "
                            f"type {type(t).__name__}")
    if executable:
        # after the outputs got their history: a saved output is recognised by its grad_fn,
        # and versions are those the backward must find
        stack = saved_hooks.STATE.stack
        hooks = stack[-1] if stack else None
        node._fn_saved = tuple(None if t is None else SavedTensor(t, node, hooks)
                               for t in to_save)
