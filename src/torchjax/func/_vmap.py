"""torch.func.vmap on jax.vmap.

The vmapped function runs once, traced by jax.vmap, on Tensors that wrap JAX batch tracers;
inside it every Tensor has the per-example shape, as in PyTorch. Non-Tensor arguments and
arguments with in_dim None are closed over unchanged. Each Tensor output comes back with its
batch dimension at 0 and is then moved to its out_dim.
"""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp

from .. import _functionalize as F
from .._tensor import Tensor
from .._x64 import scoped
from . import _randomness

_ITEM_MSG = (
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
    "calling .item() on a Tensor, please try to rewrite what you're doing with other "
    "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
    "report.")
_CONTROL_FLOW_MSG = (
    "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
    "flow. We don't support that yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues .")


def get_name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({get_name(func.func)}, ...)"
    return repr(func)


def wraps(func):
    """functools.wraps without copying __dict__ (func may be a Module)."""
    def deco(wrapper):
        try:
            return functools.update_wrapper(wrapper, func, updated=())
        except (AttributeError, TypeError):
            return wrapper
    return deco


def batched_call(fn, arrays, in_axes, size: int, randomness: str, out_axes):
    """jax.vmap(fn)(*arrays) with the vmap level's randomness mode active while fn traces."""
    try:
        if _randomness.needs_index(randomness):
            def run(index, *xs):
                with _randomness.level(randomness, index):
                    return fn(*xs)
            index = jnp.arange(size, dtype=jnp.uint32)
            return jax.vmap(run, in_axes=(0, *in_axes), out_axes=out_axes,
                            axis_size=size)(index, *arrays)

        def run(*xs):
            with _randomness.level(randomness):
                return fn(*xs)
        return jax.vmap(run, in_axes=tuple(in_axes), out_axes=out_axes,
                        axis_size=size)(*arrays)
    except jax.errors.TracerBoolConversionError as e:
        raise RuntimeError(_CONTROL_FLOW_MSG) from e
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError) as e:
        raise RuntimeError(_ITEM_MSG) from e


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """Vectorize func over dimension in_dims of its inputs (torch.func.vmap)."""
    _randomness.check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @wraps(func)
    @scoped
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is not None:
            return _chunked_vmap(func, batch_size, chunk_size, flat_in_dims, flat_args, spec,
                                 out_dims, randomness, kwargs)
        return _flat_vmap(func, batch_size, flat_in_dims, flat_args, spec, out_dims,
                          randomness, kwargs)
    return wrapped


def _check_out_dims(out_dims, func) -> None:
    if isinstance(out_dims, int):
        return
    for d in F.tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                "None or a python collection of ints representing where in the outputs the "
                "vmapped dimension should appear.")


def _process_inputs(in_dims, args, func):
    name = get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
            f"a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = F.tree_flatten(args)
    flat_in_dims = F.broadcast_prefix(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure "
            f"{F.spec_str(F.tree_flatten(in_dims)[1])} but inputs has structure "
            f"{F.spec_str(spec)}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                "but in_dim must be either an integer dimension or None.")
        if d is not None and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim")
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                f"input, but that input is a Tensor of dimensionality {arg.dim()} so expected "
                f"in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    return _batch_size(flat_in_dims, flat_args), flat_in_dims, flat_args, spec


def _batch_size(flat_in_dims, flat_args) -> int:
    sizes = [a.shape[d] for d, a in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _flat_out_dims(out, spec, out_dims, func):
    def incompatible():
        raise ValueError(
            f"vmap({get_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            "compatible with the structure of `outputs`. out_dims has structure "
            f"{F.spec_str(F.tree_flatten(out_dims)[1])} but outputs has structure "
            f"{F.spec_str(spec)}.")
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        incompatible()
    flat = F.broadcast_prefix(out_dims, spec)
    if flat is None:
        incompatible()
    return flat


def _flat_vmap(func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs):
    name = get_name(func)
    slots = [i for i, d in enumerate(flat_in_dims) if d is not None]
    arrays = [flat_args[i]._data for i in slots]
    in_axes = [flat_in_dims[i] for i in slots]
    # unbatched Tensor arguments must not be written with batched values (PyTorch raises)
    fixed = [(a, a._data) for a, d in zip(flat_args, flat_in_dims)
             if d is None and isinstance(a, Tensor)]
    box, inputs = F.Box(), F.Box()

    def post(out):
        leaves, out_spec = F.tree_flatten(out)
        dims = _flat_out_dims(out, out_spec, out_dims, func)
        batched, unbatched, kinds = [], [], []
        for x, d in zip(leaves, dims):
            if d is None:
                if isinstance(x, Tensor):
                    unbatched.append(x._data)
                    kinds.append(("u", None))
                else:
                    kinds.append(("obj", x))
            else:
                if not isinstance(x, Tensor):
                    raise ValueError(
                        f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                        f"{type(x)}. Did you mean to set out_dims= to None for output?")
                batched.append(x._data)
                kinds.append(("b", d))
        # batched inputs func changed in place: their new values go back to the caller's
        # tensors, as PyTorch's in-place ops on batched inputs write through
        changed = [k for k, (t, a) in enumerate(inputs.value) if t._data is not a]
        box.value = (out_spec, kinds, changed)
        return batched, unbatched, [inputs.value[k][0]._data for k in changed]

    pure = F.pure_function(func, F.tree_unflatten(flat_args, spec), kwargs, slots, post,
                           inputs=inputs)
    try:
        batched, unbatched, written = batched_call(pure, arrays, in_axes, batch_size,
                                                   randomness, (0, None, 0))
    except ValueError as e:
        _restore(fixed)
        if "but output was batched" in str(e):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                             "when out_dim is None") from e
        raise
    except BaseException:
        _restore(fixed)
        raise
    leaked = _restore(fixed)
    if leaked is not None:
        raise RuntimeError(f"output with shape {list(leaked)} doesn't match the broadcast "
                           f"shape {[batch_size] + list(leaked)}")
    out_spec, kinds, changed = box.value
    for k, new in zip(changed, written):
        target = flat_args[slots[k]]
        target.copy_(F.wrap(jnp.moveaxis(new, 0, in_axes[k])))
    bi, ui = iter(batched), iter(unbatched)
    leaves = []
    for kind, v in kinds:
        if kind == "b":
            a = next(bi)
            leaves.append(F.wrap(jnp.moveaxis(a, 0, v) if v != 0 else a))
        elif kind == "u":
            leaves.append(F.wrap(next(ui)))
        else:
            leaves.append(v)
    return F.tree_unflatten(leaves, out_spec)


def _restore(fixed):
    """Put back unbatched arguments that func overwrote with batched (traced) values; the
    shape of the first such argument, or None."""
    leaked = None
    for t, a in fixed:
        if t._data is not a and isinstance(t._data, jax.core.Tracer):
            t._data = a
            if leaked is None:
                leaked = a.shape
    return leaked


def _chunked_vmap(func, batch_size, chunk_size, flat_in_dims, flat_args, spec, out_dims,
                  randomness, kwargs):
    sizes = [chunk_size] * (batch_size // chunk_size)
    if batch_size % chunk_size:
        sizes.append(batch_size % chunk_size)
    bounds = list(zip(itertools.accumulate([0] + sizes[:-1]), sizes))
    outputs = []
    with _randomness.same_across_chunks(randomness) as reset:
        for start, n in bounds:
            chunk_args = [
                a if d is None else F.wrap(jax.lax.slice_in_dim(a._data, start, start + n,
                                                                axis=d))
                for a, d in zip(flat_args, flat_in_dims)]
            reset()
            outputs.append(_flat_vmap(func, n, flat_in_dims, chunk_args, spec, out_dims,
                                      randomness, kwargs))
    if len(outputs) == 1:
        return outputs[0]
    first, out_spec = F.tree_flatten(outputs[0])
    rest = [F.tree_flatten(o)[0] for o in outputs[1:]]
    dims = _flat_out_dims(outputs[0], out_spec, out_dims, func)
    leaves = []
    for k, (x, d) in enumerate(zip(first, dims)):
        if d is None:
            leaves.append(x)
        else:
            parts = [x._data] + [r[k]._data for r in rest]
            leaves.append(F.wrap(jnp.concatenate(parts, axis=d)))
    return F.tree_unflatten(leaves, out_spec)
