"""jacrev, jacfwd, hessian: Jacobians as vmapped vjps / jvps over a standard basis.

Results nest as in PyTorch: the outer structure is func's output, the inner one the
differentiated arguments (a bare tensor when argnums is an int); each block has shape
output.shape + input.shape.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _functionalize as F
from .._tensor import Tensor
from .._x64 import scoped
from . import _argnums
from ._grad import _aux_arrays, _check_outputs, split_aux, vjp_with_argnums
from ._randomness import check_randomness_arg
from ._vmap import batched_call, wraps


def _error_if_complex(api: str, tree, is_input: bool) -> None:
    for idx, x in enumerate(F.tree_flatten(tree)[0]):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {idx}")


def _basis(arrays, dtypes, total: int, start: int, stop: int) -> list:
    """Rows start..stop of the identity over the concatenated flattened arrays, split per
    array and shaped (rows, *array.shape)."""
    rows = jnp.arange(start, stop)[:, None]
    out, offset = [], 0
    for a, dt in zip(arrays, dtypes):
        n = a.size
        cols = jnp.arange(offset, offset + n)[None, :]
        out.append((rows == cols).astype(dt).reshape((stop - start,) + a.shape))
        offset += n
    return out


def _nest(blocks, out_spec, in_spec, argnums):
    """blocks[i][j] (output i, input j) -> PyTorch's nesting."""
    per_out = []
    for row in blocks:
        inner = F.tree_unflatten(row, in_spec)
        per_out.append(inner[0] if isinstance(argnums, int) else inner)
    return F.tree_unflatten(per_out, out_spec)


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False):
    """The Jacobian of func w.r.t. args[argnums] by reverse mode (one vjp per output row)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @wraps(func)
    @scoped
    def wrapper(*args):
        _error_if_complex("jacrev", args, is_input=True)
        out, vjp_fn, aux, flat_out = vjp_with_argnums(func, args, argnums, has_aux)
        outs, out_spec = F.tree_flatten(out)
        _error_if_complex("jacrev", outs, is_input=False)
        nums = _argnums.normalize(argnums, len(args))
        primals = _argnums.slice_args(args, nums, as_tuple=True)
        flat_in, in_spec = F.tree_flatten(primals)
        total = sum(o.size for o in flat_out)
        dtypes = [o.dtype for o in flat_out]
        step = total if chunk_size is None else chunk_size
        chunks = []
        for start in range(0, total, max(step, 1)):
            stop = min(start + step, total)
            basis = _basis(flat_out, dtypes, total, start, stop)

            def row_vjp(*cts):
                grads = vjp_fn(F.tree_unflatten([F.wrap(c) for c in cts], out_spec))
                return [g._data for g in F.tree_flatten(grads)[0]]
            chunks.append(batched_call(row_vjp, basis, [0] * len(basis), stop - start,
                                       "error", 0))
        if chunks:
            per_in = [jnp.concatenate([c[j] for c in chunks], 0) if len(chunks) > 1
                      else chunks[0][j] for j in range(len(flat_in))]
        else:
            per_in = [jnp.zeros((0,) + tuple(p.shape), p._data.dtype) for p in flat_in]
        blocks, offset = [], 0
        for o in flat_out:
            row = [F.wrap(r[offset:offset + o.size].reshape(o.shape + r.shape[1:]))
                   for r in per_in]
            blocks.append(row)
            offset += o.size
        jac = _nest(blocks, out_spec, in_spec, nums)
        return (jac, aux) if has_aux else jac
    return wrapper


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian of func w.r.t. args[argnums] by forward mode (a vmapped jvp)."""
    @wraps(func)
    @scoped
    def wrapper(*args):
        _error_if_complex("jacfwd", args, is_input=True)
        check_randomness_arg(randomness)  # checked when the vmap runs, as in PyTorch
        nums = _argnums.normalize(argnums, len(args))
        primals = _argnums.slice_args(args, nums, as_tuple=True)
        flat_in, in_spec = F.tree_flatten(primals)
        _argnums.tensor_leaves(primals)
        slots = _argnums.diff_slots(args, nums)
        arrays = [p._data for p in flat_in]
        total = sum(a.size for a in arrays)
        out_box, aux_box = F.Box(), F.Box()
        api = "jvp(f, primals, tangents)"

        def post(out):
            out, aux = split_aux(out, has_aux, api)
            flat, spec = F.tree_flatten(out)
            _check_outputs(flat, api)
            _error_if_complex("jacfwd", flat, is_input=False)
            out_box.value = spec
            return [t._data for t in flat], _aux_arrays(aux, aux_box)

        pure = F.pure_function(func, args, {}, slots, post, differentiating=True)

        def push_jvp(*tangents):
            _, tans, aux = jax.jvp(pure, tuple(arrays), tuple(tangents), has_aux=True)
            return tans, aux

        basis = _basis(arrays, [a.dtype for a in arrays], total, 0, total)
        tans, aux_arrays = batched_call(push_jvp, basis, [0] * len(basis), total, randomness,
                                        0)
        out_spec = out_box.value
        blocks = []
        for t in tans:  # (total, *out.shape) -> one (out.shape + in.shape) block per input
            moved = jnp.moveaxis(t, 0, -1)
            row, offset = [], 0
            for a in arrays:
                part = moved[..., offset:offset + a.size]
                row.append(F.wrap(part.reshape(moved.shape[:-1] + a.shape)))
                offset += a.size
            blocks.append(row)
        jac = _nest(blocks, out_spec, in_spec, nums)
        if has_aux:
            aux = F.join_tensors([x[0] for x in aux_arrays], aux_box.value)
            return jac, aux
        return jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of func w.r.t. args[argnums]: jacfwd(jacrev(func)) (forward-over-reverse)."""
    return jacfwd(jacrev(func, argnums), argnums)
