"""gradcheck and gradgradcheck: analytical gradients checked against finite differences.

The numerical Jacobian perturbs one element of an input's data at a time (central
differences, no version bump, as PyTorch's `x.data` writes); the analytical Jacobian is built
row by row from autograd.grad with one-hot grad_outputs. Both are (input numel, output numel)
matrices, the layout PyTorch prints in its mismatch message.

Complex numbers follow PyTorch's convention: a complex output is checked as two real
functions (its real part, then its imaginary part), and a complex input's numerical column is
the conjugate Wirtinger derivative ds/dx + 1j * ds/dy, which is what autograd.grad returns.

fast_mode=True runs this same full-Jacobian check: PyTorch's fast mode only reduces the cost
of the check (a random projection of the Jacobian), so every function it passes, this passes
too, only more slowly. Forward-mode and batched (vmap) checks are not available and raise
NotImplementedError when asked for.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .._x64 import scoped
from .function import Function

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


# -- small helpers ------------------------------------------------------------------------------

def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_inexact(t) -> bool:
    return isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)


def _differentiable_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad)


def _diff_inputs(inputs) -> list:
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def _np(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach()._data)


@scoped  # float64 perturbed inputs stay float64
def _tensor(arr: np.ndarray) -> Tensor:
    return Tensor._wrap(jnp.asarray(arr))


def _autograd_grad(*args, **kwargs):
    # imported late: torchjax.autograd re-exports this module, so it may not be loaded yet
    from . import grad
    return grad(*args, **kwargs)


# -- input checks -------------------------------------------------------------------------------

def _check_inputs(inputs) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp.dtype.name not in ("float64", "complex128"):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not "
                    "of double precision floating point or complex. ", stacklevel=3)
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


# -- numerical Jacobian -------------------------------------------------------------------------

def _evaluate(fn, inputs) -> list:
    """The values of fn's floating/complex outputs (None for the others), as numpy arrays.

    fn runs with grad enabled: gradgradcheck's function differentiates inside itself.
    """
    return [_np(o) if _is_inexact(o) else None for o in _as_tuple(fn(*inputs))]


def _check_same(a, b, eps, idx) -> None:
    if a.shape != b.shape:
        raise AssertionError("Expected `func` to return outputs with the same shape when inputs "
                             f"are perturbed on index {idx} by {eps}, but got: shapes "
                             f"{_size(a.shape)} and {_size(b.shape)}.")
    if a.dtype != b.dtype:
        raise AssertionError("Expected `func` to return outputs with the same dtype when inputs "
                             f"are perturbed on index {idx} by {eps}, but got: dtypes "
                             f"{_dtype_name(a.dtype)} and {_dtype_name(b.dtype)}.")


def _size(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _dtype_name(np_dtype) -> str:
    return f"torch.{np.dtype(np_dtype).name}"


def _central_difference(fn, inputs, inp, base, flat_idx, delta, eps) -> list:
    """(f(x + delta) - f(x - delta)) / (2 eps) per output, perturbing one element of inp."""
    idx = np.unravel_index(flat_idx, base.shape) if base.ndim else ()
    outs = []
    for sign in (-1, 1):
        pert = base.copy()
        pert[idx] = base[idx] + sign * delta  # the assignment rounds to the input's dtype
        inp.data = _tensor(pert)
        outs.append(_evaluate(fn, inputs))
    cols = []
    for a, b in zip(*outs):
        if a is None:
            cols.append(None)
            continue
        _check_same(a, b, eps, tuple(int(i) for i in idx))
        cols.append(((b - a) / (2 * eps)).astype(a.dtype).reshape(-1))
    return cols


def _numerical_jacobians(fn, inputs, func_out, eps) -> list:
    """jac[k][i]: (numel of k-th differentiable input, numel of output i) for each inexact
    output i of func_out (None for the other outputs)."""
    func_out = _as_tuple(func_out)
    result = []
    for inp in _diff_inputs(inputs):
        original = inp._data
        base = np.array(original)
        is_complex = np.iscomplexobj(base)
        jacs = []
        for o in func_out:
            if _is_inexact(o):
                dt = base.dtype if is_complex else np.asarray(o.detach()._data).dtype
                jacs.append(np.zeros((base.size, o.numel()), dt))
            else:
                jacs.append(None)
        try:
            for d in range(base.size):
                cols = _central_difference(fn, inputs, inp, base, d, eps, eps)
                if is_complex:  # conjugate Wirtinger derivative: ds/dx + 1j * ds/dy
                    cols_y = _central_difference(fn, inputs, inp, base, d, eps * 1j, eps)
                    cols = [None if c is None else c + 1j * cy for c, cy in zip(cols, cols_y)]
                for jac, col in zip(jacs, cols):
                    if jac is not None and col is not None:
                        jac[d] = col
        finally:
            inp.data = Tensor._wrap(original)  # the very array: no copy left behind
        result.append(jacs)
    return result


# -- analytical Jacobian ------------------------------------------------------------------------

def _analytical_jacobians(inputs, output):
    """jac[k]: (numel of k-th differentiable input, numel of output) from one-hot vjps, plus
    whether every gradient had its input's size and dtype."""
    diff_inputs = _diff_inputs(inputs)
    out_arr = _np(output)
    jacs = [np.zeros((t.numel(), out_arr.size), np.asarray(t.detach()._data).dtype)
            for t in diff_inputs]
    sizes_ok = types_ok = True
    for j in range(out_arr.size):
        one_hot = np.zeros(out_arr.size, out_arr.dtype)
        one_hot[j] = 1
        grads = _autograd_grad(output, diff_inputs, _tensor(one_hot.reshape(out_arr.shape)),
                               retain_graph=True, allow_unused=True)
        for k, (g, t) in enumerate(zip(grads, diff_inputs)):
            if g is None:
                continue  # no gradient flows: a zero column
            if tuple(g.shape) != tuple(t.shape):
                sizes_ok = False
                continue
            if g.dtype != t.dtype:
                types_ok = False
            jacs[k][:, j] = _np(g).reshape(-1)
    return jacs, sizes_ok, types_ok


_NONDET_NOTE = (
    "\n\nNOTE: If your op relies on non-deterministic operations, this failure might be "
    "expected: call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.\n")


def _checked_analytical(inputs, output, nondet_tol, check_grad_dtypes) -> list:
    # computed twice: a backward that gives different values for the same inputs is reported
    jacs1, sizes_ok, types_ok = _analytical_jacobians(inputs, output)
    jacs2, _, _ = _analytical_jacobians(inputs, output)
    reentrant = all(a.size == 0 or np.abs(a - b).max() <= nondet_tol
                    for a, b in zip(jacs1, jacs2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + _NONDET_NOTE)
    return jacs1


# -- the check itself ---------------------------------------------------------------------------

def _mismatch_msg(analytical, numerical, out_idx, in_idx, complex_indices, test_imag) -> str:
    prefix = ""
    if complex_indices and out_idx in complex_indices:
        part = "imaginary" if test_imag else "real"
        prefix = f"While considering the {part} part of complex outputs only, "
    return (prefix + f"Jacobian mismatch for output {out_idx:d} with respect to input "
            f"{in_idx:d},\nnumerical:{_tensor(numerical)}\nanalytical:{_tensor(analytical)}\n")


def _allclose(a, n, rtol, atol) -> bool:
    # torch.allclose(analytical, numerical): |a - n| <= atol + rtol * |n|, NaN never close
    return bool(np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False))


def _full_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                nondet_tol, complex_indices=None, test_imag=False) -> None:
    func_out = _as_tuple(func_out)
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    if not outputs:
        # nothing differentiable comes out, so the function must be locally constant
        for per_input in numerical:
            for jac in per_input:
                if jac is not None and np.any(jac != 0):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    # rows: differentiable outputs (by their position among func's outputs); columns: inputs
    diff_pos = [i for i, o in enumerate(func_out) if isinstance(o, Tensor) and o.requires_grad]
    for i, (pos, o) in enumerate(zip(diff_pos, outputs)):
        analytical = _checked_analytical(inputs, o, nondet_tol, check_grad_dtypes)
        for k, a in enumerate(analytical):
            n = numerical[k][pos]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(a, n, i, k, complex_indices, test_imag))


def _part_fn(func, part):
    def wrapped(*inputs):
        return tuple(getattr(o, part) if isinstance(o, Tensor) and o.is_complex() else o
                     for o in _as_tuple(func(*inputs)))
    return wrapped


def _check_real_imag(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                     nondet_tol) -> None:
    if not any(isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(func_out)):
        _full_check(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol)
        return
    # a complex output is two real functions: PyTorch checks the imaginary part first
    complex_indices = [i for i, o in enumerate(outputs) if o.is_complex()]
    for part, test_imag in (("imag", True), ("real", False)):
        fn = _part_fn(func, part)
        out = fn(*inputs)
        _full_check(fn, out, inputs, _differentiable_outputs(out), eps, rtol, atol,
                    check_grad_dtypes, nondet_tol, complex_indices, test_imag)


def _check_backward_mul_by_grad_output(outputs, inputs, masked) -> None:
    diff_inputs = _diff_inputs(inputs)
    zeros = [_tensor(np.zeros_like(_np(o))) for o in outputs]
    grads = _autograd_grad(outputs, diff_inputs, zeros, allow_unused=True)
    for g, t in zip(grads, diff_inputs):
        if g is None:
            continue
        arr = _np(g)
        zero = np.allclose(arr, 0) if masked else not np.any(arr != 0)
        if not zero:
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != t.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(g.shape) != tuple(t.shape):
            raise GradcheckError("grad is incorrect size")


class _UndefinedGrad(Function):
    """Identity whose backward passes no gradient on: the grad_fn of its input then receives
    no gradient for that output, PyTorch's "undefined" output grad."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def _warn_undefined_bc() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled "
        "by default, but it may break existing callers of this function. If this is true for "
        'you, you can call this function with "check_undefined_grad=False" to disable the '
        "feature", stacklevel=4)


def _check_undefined_grad_support(outs, diff_inputs) -> None:
    zeros = [_tensor(np.zeros_like(_np(o))) for o in outs]
    try:
        grads = _autograd_grad(outs, diff_inputs, zeros, allow_unused=True)
    except NotImplementedError:
        raise  # a torchjax feature gap, not a wrong backward: say so as it is
    except RuntimeError as e:
        _warn_undefined_bc()
        raise GradcheckError(
            "Expected backward function to handle undefined output grads. Please look at "
            '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
        ) from e
    for g in grads:
        if g is not None and np.any(_np(g) != 0):
            _warn_undefined_bc()
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are "
                'undefined or zero. Please look at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"')


def _check_undefined_backward(func, inputs) -> None:
    diff_inputs = _diff_inputs(inputs)
    # every output undefined at once, then (with several outputs) one at a time
    _check_undefined_grad_support(
        [_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))], diff_inputs)
    n = len(_differentiable_outputs(func(*inputs)))
    if n > 1:
        for undef in range(n):
            outs = _differentiable_outputs(func(*inputs))
            _check_undefined_grad_support(
                [_UndefinedGrad.apply(o) if i == undef else o for i, o in enumerate(outs)],
                diff_inputs)


def _unsupported(option: str) -> NotImplementedError:
    return NotImplementedError(
        f"gradcheck({option}=True) is not supported by torchjax: forward-mode and batched "
        f"(vmap) gradient checks are not implemented; call it with {option}=False, or compare "
        "against jax.jvp / jax.vmap of the function directly")


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_backward_ad, masked) -> bool:
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    if check_backward_ad:
        _check_real_imag(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                         nondet_tol)
        _check_backward_mul_by_grad_output(outputs, inputs, masked)
        if check_undefined_grad:
            _check_undefined_backward(func, inputs)
    return True


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of `func` at `inputs` against central finite differences.

    Returns True, or raises GradcheckError (returns False when raise_exception=False).
    fast_mode=True runs the full (slow-mode) check. check_forward_ad, check_batched_grad
    and check_batched_forward_grad are not supported.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    for option, value in (("check_forward_ad", check_forward_ad),
                          ("check_batched_grad", check_batched_grad),
                          ("check_batched_forward_grad", check_batched_forward_grad)):
        if value:
            raise _unsupported(option)
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_backward_ad, bool(masked))
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of the function (inputs, grad_outputs) ->
    autograd.grad(func(inputs), inputs, grad_outputs, create_graph=True).

    grad_outputs default to random tensors in [-1, 1) that require grad, as in PyTorch.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        from ..testing import make_tensor
        grad_outputs = tuple(
            make_tensor(o.shape, dtype=o.dtype if _is_inexact(o) else "float64",
                        device=o.device, low=-1, high=1, requires_grad=True,
                        noncontiguous=gen_non_contig_grad_outputs)
            for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}

    def first_derivative(*args):
        ins = args[:len(args) - n_out]
        outs = _differentiable_outputs(func(*ins))
        grads = _autograd_grad(outs, tuple(x for i, x in enumerate(ins) if i in diff_in),
                               args[len(args) - n_out:], create_graph=True,
                               allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
