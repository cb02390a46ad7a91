"""torchjax.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp (PyTorch's API).

Each runs JAX's transforms on the pure function of the inputs' arrays (torchjax._functionalize)
instead of building and replaying the tape; inputs and outputs follow PyTorch's conventions
(a Tensor or a tuple of Tensors; results nested and unpacked exactly as PyTorch does).
strict=True asks whether outputs are reachable from inputs on the linearized program
(torchjax._dependence), PyTorch's "does it require grad" question.

create_graph=True (results that carry autograd history for a further backward) instead follows
PyTorch's own algorithm on the tape: func runs on views of the inputs, and the results are
torchjax.autograd.grad(..., create_graph=True) calls (one per output element for jacobian and
hessian, the double-backward trick for jvp and hvp), so they are differentiable with respect
to the inputs, v and anything func captures (_functional_graph.py).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _functionalize as F
from .._dependence import dependence
from .._x64 import scope_functions
from ..func._jacobian import _basis
from ._functional_checks import (
    _as_tuple,
    _check_inputs_reached,
    _check_outputs_require_grad,
    _cotangent,
    _inexact,
    _pure,
    _require_float,
    _scalar_pure,
    _second_order_deps,
    _tuple_postprocess,
    _validate_v,
)
from ._functional_graph import (
    _hessian_graph,
    _hessian_product_graph,
    _jacobian_graph,
    _jvp_graph,
    _vjp_graph,
)

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- the API ---------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    if create_graph:
        return _vjp_graph(func, inputs, v, strict)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    _require_float(inputs)
    box = F.Box()
    pure = _pure(func, "vjp", box)
    arrays = [t._data for t in inputs]
    outs, pullback = jax.vjp(pure, *arrays)
    is_outputs_tuple = box.value
    deps = dependence(pure, arrays) if strict else None
    if strict:
        _check_outputs_require_grad(deps)
    out_t = tuple(F.wrap(o) for o in outs)
    if v is not None:
        _, v = _as_tuple(v, "v", "vjp")
        _validate_v(v, out_t, is_outputs_tuple)
    else:
        if len(outs) != 1 or outs[0].size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        v = (F.wrap(jnp.ones(outs[0].shape, outs[0].dtype)),)
    grads = pullback([_cotangent(x, o) for x, o in zip(v, outs)])
    if strict:
        _check_inputs_reached(deps, len(arrays))
    return (_tuple_postprocess(out_t, is_outputs_tuple),
            _tuple_postprocess(tuple(F.wrap(g) for g in grads), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product at inputs."""
    if create_graph:
        return _jvp_graph(func, inputs, v, strict)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    _require_float(inputs)
    if v is not None:
        _, v = _as_tuple(v, "v", "jvp")
        _validate_v(v, inputs, is_inputs_tuple)
    else:
        if len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        v = (F.wrap(jnp.ones(inputs[0].shape, inputs[0]._data.dtype)),)
    box = F.Box()
    pure = _pure(func, "jvp", box)
    arrays = [t._data for t in inputs]
    tangents = [x._data.astype(a.dtype) for x, a in zip(v, arrays)]
    outs, tans = jax.jvp(pure, arrays, tangents)
    is_outputs_tuple = box.value
    if strict:
        deps = dependence(pure, arrays)
        _check_outputs_require_grad(deps)
        _check_inputs_reached(deps, len(arrays))
    tans = [jnp.zeros(o.shape, o.dtype) if t.dtype == jax.dtypes.float0 else t
            for o, t in zip(outs, tans)]
    return (_tuple_postprocess(tuple(F.wrap(o) for o in outs), is_outputs_tuple),
            _tuple_postprocess(tuple(F.wrap(t) for t in tans), is_outputs_tuple))


def _jacobian_blocks(pure, arrays, forward: bool):
    """blocks[i][j] = d output_i / d input_j, shaped output_i.shape + input_j.shape; integer
    outputs (which have no gradient in PyTorch) give zeros. One trace of func either way: a
    vjp pulled back over the output basis, or a jvp pushed forward over the input basis."""
    where = F.Box()

    def split(*xs):
        res = pure(*xs)
        where.value = [(_inexact(o), tuple(o.shape)) for o in res]
        return [o for o in res if _inexact(o)]

    if forward:
        total = sum(a.size for a in arrays)
        basis = _basis(arrays, [a.dtype for a in arrays], total, 0, total)

        def push(*tangents):
            return jax.jvp(split, tuple(arrays), tuple(tangents))[1]
        diff_tans = jax.vmap(push)(*basis)
        diff = []
        for t in diff_tans:  # (total, *out.shape): the input basis runs along dim 0
            moved = jnp.moveaxis(t, 0, -1)
            row, offset = [], 0
            for a in arrays:
                part = moved[..., offset:offset + a.size]
                row.append(part.reshape(moved.shape[:-1] + a.shape))
                offset += a.size
            diff.append(row)
    else:
        diff_outs, pullback = jax.vjp(split, *arrays)
        total = sum(o.size for o in diff_outs)
        diff = []
        if diff_outs:
            basis = _basis(diff_outs, [o.dtype for o in diff_outs], total, 0, total)
            per_in = jax.vmap(lambda *cts: pullback(list(cts)))(*basis)
            offset = 0
            for o in diff_outs:
                diff.append([r[offset:offset + o.size].reshape(o.shape + r.shape[1:])
                             for r in per_in])
                offset += o.size
    rows = iter(diff)
    blocks = []
    for is_diff, shape in where.value:
        if is_diff:
            blocks.append([F.wrap(b) for b in next(rows)])
        else:
            blocks.append([F.wrap(jnp.zeros(shape + a.shape, a.dtype)) for a in arrays])
    if forward:  # PyTorch's forward-mode jacobian nests lists, its reverse mode tuples
        return blocks
    return tuple(tuple(row) for row in blocks)


def _forward_mode_options(create_graph: bool, strict: bool) -> None:
    """PyTorch's errors for options its forward-mode jacobian does not take."""
    if create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.')


def _strict_reached(deps, vectorize: bool) -> None:
    """strict=True: no vectorize, and every output reached from every input."""
    if vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
            "not supported together. Please either set `strict=False` or "
            "`vectorize=False`.")
    for i, row in enumerate(deps):
        for j, reached in enumerate(row):
            if not reached:
                raise RuntimeError(f"Output {i} of the user-provided function is "
                                   f"independent of input {j}. This is not allowed in "
                                   "strict mode.")


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs (nested as PyTorch's: outputs outer, inputs inner)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    forward = strategy == "forward-mode"
    if forward:
        _forward_mode_options(create_graph, strict)
    if create_graph:
        return _jacobian_graph(func, inputs, strict, vectorize)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if forward and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    if not forward:
        _require_float(inputs)
    box = F.Box()
    pure = _pure(func, "jacobian", box)
    arrays = [t._data for t in inputs]
    if strict:
        deps = dependence(pure, arrays)
        _check_outputs_require_grad(deps)
        _strict_reached(deps, vectorize)
    blocks = _jacobian_blocks(pure, arrays, forward)
    return _tuple_postprocess(blocks, (box.value, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar func at inputs (a tuple of tuples for tuple inputs)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        _forward_mode_options(create_graph, strict)
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian isonly implemented for "
                                      "`vectorize=True`.")
    if create_graph:
        return _hessian_graph(func, inputs, is_inputs_tuple, strict, vectorize)
    _require_float(inputs)
    with_out = _scalar_pure(func, "hessian")
    arrays = [t._data for t in inputs]

    def scalar(*xs):
        return with_out(*xs)[0]
    if strict:
        deps = _second_order_deps(scalar, arrays)
        _strict_reached(deps, vectorize)
    argnums = tuple(range(len(arrays)))
    h = jax.hessian(scalar, argnums=argnums)(*arrays)
    if outer_jacobian_strategy == "forward-mode":
        res = [[F.wrap(b) for b in row] for row in h]
    else:
        res = tuple(tuple(F.wrap(b) for b in row) for row in h)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _hessian_product(func, inputs, v, create_graph, strict, fn_name: str):
    if create_graph:
        return _hessian_product_graph(func, inputs, v, strict, fn_name)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    _require_float(inputs)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        _validate_v(v, inputs, is_inputs_tuple)
    else:
        if len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        v = (F.wrap(jnp.ones(inputs[0].shape, inputs[0]._data.dtype)),)
    scalar = _scalar_pure(func, fn_name)
    arrays = [t._data for t in inputs]
    vs = [x._data.astype(a.dtype) for x, a in zip(v, arrays)]
    value_and_grad = jax.value_and_grad(scalar, argnums=tuple(range(len(arrays))),
                                        has_aux=True)

    def gradient(*xs):  # the output keeps its own shape as aux (PyTorch returns it as is)
        (_, out), grads = value_and_grad(*xs)
        return list(grads), out

    if fn_name == "vhp":
        _, pullback, output = jax.vjp(gradient, *arrays, has_aux=True)
        prod = pullback(vs)
    else:
        _, prod, output = jax.jvp(gradient, arrays, vs, has_aux=True)
    if strict:
        deps = _second_order_deps(lambda *xs: scalar(*xs)[0], arrays)
        for i in range(len(arrays)):
            if fn_name == "vhp" and not any(row[i] for row in deps):
                raise RuntimeError("The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode.")
    return (F.wrap(output),
            _tuple_postprocess(tuple(F.wrap(p) for p in prod), is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar func."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v): the Hessian-vector product of a scalar func."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


# every transform traces the user's function in torchjax's x64 scope
scope_functions(globals(), __all__)
