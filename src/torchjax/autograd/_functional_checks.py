"""torchjax.autograd.functional's argument conventions (a Tensor or a tuple of Tensors, results
unpacked as PyTorch does), the pure functions it hands to JAX, and the strict-mode checks and
their messages."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _functionalize as F
from .._autograd.grad_mode import enable_grad
from .._dependence import dependence
from .._tensor import Tensor

# -- PyTorch's argument conventions ----------------------------------------------------------

def _as_tuple(inp, arg_name: str, fn_name: str):
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}." if is_tuple
                     else f"the given {arg_name} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _require_float(inputs) -> None:
    for t in inputs:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _pure(func, fn_name: str, box: F.Box):
    """func as a function of the input arrays returning the list of output arrays."""
    def pure(*arrays):
        with enable_grad():  # as PyTorch: func runs with grad mode on
            out = func(*[F.wrap(a) for a in arrays])
        box.value, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
        return [o._data for o in outs]
    return pure


def _scalar_pure(func, fn_name: str):
    """func for hessian/hvp/vhp: one Tensor with one element -> (0-d array, the output)."""
    def pure(*arrays):
        with enable_grad():
            out = func(*[F.wrap(a) for a in arrays])
        is_tuple, _ = _as_tuple(out, "outputs of the user-provided function", fn_name)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                               "contain a single element")
        return out._data.reshape(()), out._data
    return pure


def _inexact(a) -> bool:
    return jnp.issubdtype(a.dtype, jnp.inexact)


def _cotangent(v, out):
    if _inexact(out):
        return v._data.astype(out.dtype)
    return np.zeros(out.shape, jax.dtypes.float0)


# -- strict mode -----------------------------------------------------------------------------

def _check_outputs_require_grad(deps) -> None:
    for i, row in enumerate(deps):
        if not any(row):
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _check_inputs_reached(deps, n_inputs: int) -> None:
    for j in range(n_inputs):
        if not any(row[j] for row in deps):
            raise RuntimeError("The output of the user-provided function is independent of "
                               f"input {j}. This is not allowed in strict mode.")


def _second_order_deps(scalar, arrays):
    """Strict checks shared by hessian/hvp/vhp; returns deps of the gradient on the inputs."""
    first = dependence(lambda *xs: [scalar(*xs)], arrays)
    _check_outputs_require_grad(first)
    for i, reached in enumerate(first[0]):
        if not reached:
            raise RuntimeError("The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
    gradient = jax.grad(scalar, argnums=tuple(range(len(arrays))))
    deps = dependence(lambda *xs: list(gradient(*xs)), arrays)
    for i, row in enumerate(deps):
        if not any(row):
            raise _constant_jacobian(i)
    return deps



def _independent(i) -> RuntimeError:
    return RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode.")


def _constant_jacobian(i) -> RuntimeError:
    return RuntimeError(
        "While computing the hessian, found that the jacobian of the user-provided function "
        f"with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example).")


def _constant_grad_input(i) -> RuntimeError:
    return RuntimeError(f"The gradient with respect to input {i} is independent of the inputs "
                        "of the user-provided function. This is not allowed in strict mode.")


