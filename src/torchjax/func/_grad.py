"""grad, grad_and_value, vjp, jvp, linearize: torch.func's autodiff transforms on jax.vjp/jvp.

Each builds the pure function of the differentiated arrays (_functionalize), runs JAX's
transform on it and wraps the results as Tensors. Arguments that are not differentiated are
closed over as they are (constants of the transform). Because the traced function runs on
JAX's eager tracers, Python control flow on values works as in PyTorch (under grad, not vmap).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _functionalize as F
from .._tensor import Tensor
from .._x64 import scoped
from . import _argnums
from ._vmap import wraps


def split_aux(out, has_aux: bool, api: str):
    """(output, aux) of f's result: with has_aux it must be a pair, as torch.func checks."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


def _aux_arrays(aux, box):
    """aux's Tensors go through JAX as arrays (PyTorch accepts only Tensors in aux)."""
    arrays, template = F.split_tensors(aux)
    for x in template[2]:
        if x is not None:
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    box.value = template
    return arrays


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function returning (gradient of func w.r.t. args[argnums], func's value)."""

    @wraps(func)
    @scoped
    def wrapper(*args, **kwargs):
        g, value, aux = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """A function returning the gradient of func w.r.t. args[argnums] (torch.func.grad)."""

    @wraps(func)
    @scoped
    def wrapper(*args, **kwargs):
        g, _, aux = _grad_and_value(func, argnums, has_aux, args, kwargs)
        return (g, aux) if has_aux else g
    return wrapper


def _grad_and_value(func, argnums, has_aux, args, kwargs):
    """(gradient, value, aux) of a scalar func w.r.t. args[argnums]."""
    argnums = _argnums.normalize(argnums, len(args))
    diff = _argnums.slice_args(args, argnums)
    leaves, spec = F.tree_flatten(diff)
    _argnums.tensor_leaves(diff, check_float=True)
    aux_box = F.Box()
    api = "grad_and_value(f)(*args)"

    def post(out):
        out, aux = split_aux(out, has_aux, api)
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(
                f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        return out._data, _aux_arrays(aux, aux_box)

    pure = F.pure_function(func, args, kwargs, _argnums.diff_slots(args, argnums), post,
                           differentiating=True)
    value, pullback, aux_arrays = jax.vjp(pure, *[x._data for x in leaves], has_aux=True)
    if not jnp.issubdtype(value.dtype, jnp.floating):
        if jnp.issubdtype(value.dtype, jnp.complexfloating):
            raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                               f"but got {F.wrap(value).dtype}")
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn")
    grads = pullback(jnp.ones_like(value))
    g = F.tree_unflatten([F.wrap(x) for x in grads], spec)
    return g, F.wrap(value), F.join_tensors(aux_arrays, aux_box.value)


def _check_outputs(flat_out, api: str) -> None:
    if (len(flat_out) == 1 and flat_out[0] is None) or len(flat_out) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {flat_out})")
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


def _output_pure(func, args, kwargs, slots, has_aux, api, out_box, aux_box):
    """The pure function of the differentiated arrays -> (flat output arrays, aux arrays)."""
    def post(out):
        out, aux = split_aux(out, has_aux, api)
        flat, spec = F.tree_flatten(out)
        _check_outputs(flat, api)
        out_box.value = spec
        return [t._data for t in flat], _aux_arrays(aux, aux_box)
    return F.pure_function(func, args, kwargs, slots, post, differentiating=True)


@scoped
def vjp(func, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) gives one gradient per primal."""
    out, pullback, aux, _ = vjp_with_argnums(func, primals, None, has_aux)
    return (out, pullback, aux) if has_aux else (out, pullback)


def vjp_with_argnums(func, args, argnums, has_aux, api="vjp(f, *primals)"):
    """vjp restricted to args[argnums] (None: all); also returns the flat output arrays."""
    if argnums is None:
        diff = args
        slots = range(len(F.tree_flatten(args)[0]))
    else:
        argnums = _argnums.normalize(argnums, len(args))
        diff = _argnums.slice_args(args, argnums)
        slots = _argnums.diff_slots(args, argnums)
    leaves, diff_spec = F.tree_flatten(diff)
    _argnums.tensor_leaves(diff, check_float=True)
    out_box, aux_box = F.Box(), F.Box()
    pure = _output_pure(func, args, {}, slots, has_aux, api, out_box, aux_box)
    flat_out, pullback, aux_arrays = jax.vjp(pure, *[x._data for x in leaves], has_aux=True)
    out_spec = out_box.value
    for o in flat_out:
        if not (jnp.issubdtype(o.dtype, jnp.inexact)):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex "
                               f"Tensors, got Tensor with dtype {F.wrap(o).dtype}")

    @scoped  # called later by the user
    def vjp_fn(cotangents, retain_graph: bool = True, create_graph=None):
        flat_ct, ct_spec = F.tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {_spec_pprint(ct_spec)}, primal output: "
                f"{_spec_pprint(out_spec)}")
        cts = []
        for k, (c, o) in enumerate(zip(flat_ct, flat_out)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: expected cotangents to be Tensors, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{k}] has a shape of {c.shape} and "
                    f"output[{k}] has a shape of {F.wrap(o).shape}.")
            cts.append(c._data.astype(o.dtype))
        grads = pullback(cts)
        return F.tree_unflatten([F.wrap(g) for g in grads], diff_spec)

    out = F.tree_unflatten([F.wrap(o) for o in flat_out], out_spec)
    return out, vjp_fn, F.join_tensors(aux_arrays, aux_box.value), flat_out


def _spec_pprint(spec) -> str:
    # torch's treespec_pprint: the structure with leaves as "*"
    if spec == F.LEAF:
        return "*"
    t, ctx, children = spec
    inner = [_spec_pprint(c) for c in children]
    if t is tuple:
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(inner) + "]"
    if isinstance(ctx, tuple) and t is not list and t is not tuple and hasattr(t, "keys"):
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(ctx, inner)) + "}"
    return f"{t.__name__}(" + ", ".join(inner) + ")"


_JVP = "jvp(f, primals, tangents)"


@scoped
def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian of func at primals times tangents[, aux])."""
    return jvp_with_argnums(func, primals, tangents, None, strict=strict, has_aux=has_aux)


def jvp_with_argnums(func, primals, tangents, argnums, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    if argnums is None:
        diff, slots = primals, range(len(F.tree_flatten(primals)[0]))
    else:
        argnums = _argnums.normalize(argnums, len(primals))
        diff = _argnums.slice_args(primals, argnums, as_tuple=True)
        slots = _argnums.diff_slots(primals, argnums)
    flat_p, p_spec = F.tree_flatten(diff)
    flat_t, t_spec = F.tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {F.spec_str(p_spec)} and tangents with structure "
            f"{F.spec_str(t_spec)}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if len(flat) == 0:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got "
                                   f"{type(x)}")
    p_arrays, t_arrays = [], []
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(p.shape)} while the given forward gradient is of size "
                f"{list(t.shape)}.")
        p_arrays.append(p._data)
        # JAX wants a tangent of the primal's dtype (float0 for integer primals)
        if jnp.issubdtype(p._data.dtype, jnp.inexact):
            t_arrays.append(t._data.astype(p._data.dtype))
        else:
            t_arrays.append(np.zeros(p._data.shape, jax.dtypes.float0))
    out_box, aux_box = F.Box(), F.Box()
    pure = _output_pure(func, primals, {}, slots, has_aux, _JVP, out_box, aux_box)
    flat_out, flat_tan, aux_arrays = jax.jvp(pure, tuple(p_arrays), tuple(t_arrays),
                                             has_aux=True)
    if strict:
        from .._dependence import dependence
        deps = dependence(lambda *xs: pure(*xs)[0], p_arrays)
        if any(not any(row) for row in deps):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                               "independent of the inputs. This is not allowed with "
                               "strict=True.")
    out_spec = out_box.value
    tans = [F.wrap(jnp.zeros(o.shape, o.dtype) if t.dtype == jax.dtypes.float0 else t)
            for o, t in zip(flat_out, flat_tan)]
    res = (F.tree_unflatten([F.wrap(o) for o in flat_out], out_spec),
           F.tree_unflatten(tans, out_spec))
    if has_aux:
        return res + (F.join_tensors(aux_arrays, aux_box.value),)
    return res


@scoped
def linearize(func, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) reuses the linearization."""
    flat_p, p_spec = F.tree_flatten(primals)
    _argnums.tensor_leaves(primals)
    out_box, aux_box = F.Box(), F.Box()
    pure = _output_pure(func, primals, {}, range(len(flat_p)), False, "linearize", out_box,
                        aux_box)
    flat_out, lin = jax.linearize(lambda *xs: pure(*xs)[0], *[p._data for p in flat_p])
    out_spec = out_box.value

    @scoped  # called later by the user
    def jvp_fn(*tangents):
        flat_t, t_spec = F.tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                f"Expected the tangents {F.spec_str(t_spec)} to have the same argspec as the "
                f"primals {F.spec_str(p_spec)}")
        for idx, (t, p) in enumerate(zip(flat_t, flat_p)):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(
                    f"Mismatch in tangent:{idx} with shape {t.shape} in flattened pytree "
                    f"doesn't match the shape {p.shape} of the corresponding primal.")
        outs = lin(*[t._data.astype(p._data.dtype) for t, p in zip(flat_t, flat_p)])
        return F.tree_unflatten([F.wrap(o) for o in outs], out_spec)

    return F.tree_unflatten([F.wrap(o) for o in flat_out], out_spec), jvp_fn
