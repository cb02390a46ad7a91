"""`torch.X(input, ...)` for the Tensor methods PyTorch also publishes as functions and
torchjax's op table does not: the in-place forms (torch.exp_(x), torch.clamp_(x, 0, 1),
torch.zero_(x)) and a few queries (torch.is_signed(x), torch.detach(x)).

Each is input.X(...) itself, the Tensor class's method, so values, the grad_fn, the version
counter and the errors are the method's; what the function adds is PyTorch's TypeError for an
input that is not a Tensor. One table, not a def per name.
"""

from __future__ import annotations

import inspect

from ._tensor import Tensor

# Tensor methods that PyTorch 2.13 also has as torch.<name>
IN_PLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_",
)
QUERIES = ("detach", "is_signed", "is_same_size", "is_inference")
# PyTorch's parser words the error of an overloaded function (or one with keyword-only
# arguments) as "received an invalid combination of arguments" instead of naming `input`
_OVERLOADED = {"addmv_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "fill_", "xlogy_"}

__all__ = list(IN_PLACE + QUERIES)


def _not_a_tensor(name, input, args, kwargs) -> TypeError:
    if name not in _OVERLOADED:
        return TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                         f"{type(input).__name__}")
    got = [type(a).__name__ for a in (input, *args)]
    got += [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected 'input' to be a Tensor")


def _form(name: str):
    method = getattr(Tensor, name)

    def form(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise _not_a_tensor(name, input, args, kwargs)
        return method(input, *args, **kwargs)

    sig = inspect.signature(method)
    params = list(sig.parameters.values())
    form.__signature__ = sig.replace(parameters=[params[0].replace(name="input"), *params[1:]])
    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"torch.{name}(input, ...): input.{name}(...)."
    return form


globals().update({name: _form(name) for name in __all__})
