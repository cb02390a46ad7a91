"""torchjax.autograd: backward, grad and the grad-mode switches."""

from __future__ import annotations

import warnings

import jax

from .._autograd.anomaly import detect_anomaly, set_detect_anomaly
from .._autograd.engine import Ones, run_backward
from .._autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .._autograd.node import Node, accumulator_of
from .._tensor import Tensor
from .._x64 import enter, leave, scope
from . import functional, graph, profiler  # noqa: F401 (torch.autograd.profiler)
from .function import Function, FunctionCtx
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "Node", "Function", "FunctionCtx", "detect_anomaly",
           "set_detect_anomaly", "graph", "functional", "gradcheck", "gradgradcheck", "GradcheckError",
           "Variable"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _roots_and_grads(tensors, grad_tensors, create_graph):
    """The graph roots and their gradients: arrays, or Tensors when create_graph is set."""
    roots, grads = [], []
    grad_tensors = grad_tensors if grad_tensors is not None else (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"grad_tensors has {len(grad_tensors)} gradients for "
                           f"{len(tensors)} tensors; give one per tensor")
    for t, g in zip(tensors, grad_tensors):
        if not t._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
        if g is None:
            # (the aval of a pending result: its forward may run inside the backward's program)
            if (t._data if t._lazy is None else t._lazy[2]).size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = Ones(t)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor, not {type(g).__name__}")
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] "
                    f"has a shape of {t.shape}.")
            if not create_graph:
                g = g._data
        node = t._grad_fn if t._grad_fn is not None else accumulator_of(t)
        roots.append((node, t._output_nr))
        grads.append(g)
    return roots, grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of `tensors` into the .grad of the leaves (or of `inputs`)."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if retain_graph is None:
        retain_graph = create_graph
    roots, grads = _roots_and_grads(tensors, grad_tensors, create_graph)
    if create_graph and inputs is None:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", stacklevel=3)
    targets = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = {}
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            key = (t._grad_fn, t._output_nr) if t._grad_fn is not None else (
                accumulator_of(t), 0)
            targets[key] = t._store_grad_graph if create_graph else t._store_grad
    _run(roots, grads, retain_graph, targets, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """Gradients of outputs with respect to inputs, returned (not accumulated into .grad)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported yet")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    roots, grads = _roots_and_grads(outputs, grad_outputs, create_graph)
    results: dict = {}
    targets = {}
    for i, t in enumerate(inputs):
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        key = (t._grad_fn, t._output_nr) if t._grad_fn is not None else (accumulator_of(t), 0)

        def cb(ct, i=i):
            prev = results.get(i)
            results[i] = ct if prev is None else prev + ct
        targets[key] = cb
    _run(roots, grads, retain_graph, targets, create_graph)
    out = []
    for i, t in enumerate(inputs):
        g = results.get(i)
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads:
                with scope():  # zeros of t's dtype, float64 included
                    out.append(Tensor._wrap(jax.numpy.zeros_like(t._data)))
            else:
                out.append(None)
        else:
            out.append(g if create_graph else Tensor._wrap(g))
    return tuple(out)


def _run(roots, grads, retain_graph, targets, create_graph):
    # the backward pass (and the hooks it calls) runs in torchjax's x64 scope, as the ops of
    # the forward do; entered inline like dispatch's, since a training step passes here
    x64 = enter()
    try:
        if create_graph:
            from .._graph_backward import run_backward_graph
            run_backward_graph(roots, grads, bool(retain_graph), targets)
        else:
            run_backward(roots, grads, bool(retain_graph), targets)
    finally:
        leave(x64)
