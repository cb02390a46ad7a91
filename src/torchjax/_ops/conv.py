"""The convolution row (torch.convolution) and the conv1d/2d/3d, conv_transpose1d/2d/3d forms.

PyTorch's conv1d/2d/3d and conv_transpose1d/2d/3d all end in one native op,
torch.convolution, whose grad_fn is ConvolutionBackward0; here too: the six function forms
below only check their arguments, resolve padding='same'/'valid', and batch an unbatched
input (which, as in PyTorch, ends in SqueezeBackward1). The one convolution row serves every
spatial rank; how it is lowered (lax.conv_general_dilated, or a faster form on XLA's CPU
backend) is conv_cpu.py's choice. Padding rows are in padding.py, im2col / col2im in fold.py.
"""

from __future__ import annotations

import numbers
import warnings

import jax.numpy as jnp

from .. import _dtypes
from .._tensor import _TENSOR_TYPE_NAMES, Tensor
from . import conv_cpu
from ._registry import function, op


def _dtype_name(x) -> str:
    return _dtypes.from_jax(x.dtype).name


def _scalar_name(x) -> str:
    return _dtypes.SCALAR_NAMES[_dtype_name(x)]


def _not_implemented(kernel, x):
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(x)}'")


# -- convolution -----------------------------------------------------------------------------

# C++ names PyTorch prints for a bias of another dtype than the input
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}
_LEGACY_NAMES = {"bfloat16": "CPUBFloat16Type", "complex64": "CPUComplexFloatType",
                 "complex128": "CPUComplexDoubleType"}


def _legacy_type(name: str) -> str:
    return _LEGACY_NAMES.get(name) or "torch." + _TENSOR_TYPE_NAMES[name]


def _expand(values, name: str, dim: int) -> tuple:
    """A conv parameter as one int per spatial dim (PyTorch broadcasts a single value)."""
    vals = [values] if isinstance(values, numbers.Integral) else [int(v) for v in values]
    if len(vals) == 1:
        return tuple(vals * dim)
    if len(vals) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           "values to match the convolution dimensions, but got "
                           f"{name}={vals}")
    return tuple(vals)


def _spatial_names(values, name: str, sep: str = " ", fill: int = 1) -> str:
    """PyTorch's per-dim listing: "stride_height: 1 stride_width: 1". It runs a 1-d conv as a
    2-d one whose height takes the neutral value fill."""
    values = tuple(values)
    if len(values) == 1:
        values = (fill,) + values
    dims = ("depth", "height", "width")[3 - len(values):]
    return sep.join(f"{name}_{d}: {v}" for d, v in zip(dims, values))


def _check_shapes(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """PyTorch's shape checks of a convolution, in its order."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    ws, xs = list(w.shape), list(x.shape)
    if w.ndim != x.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional weight "
                           f"{ws}, but got {x.ndim}-dimensional input of size {xs} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{ws}] instead")
    if transposed:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input{xs} to "
                               f"have {ws[0]} channels, but got {xs[1]} channels instead")
        n_out = ws[1] * groups
        prefix = f"Given transposed=1, weight of size {ws}"
    else:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input{xs} "
                               f"to have {ws[1] * groups} channels, but got {xs[1]} channels "
                               "instead")
        n_out = ws[0]
        prefix = f"Given weight of size {ws}"
    if b is not None and (b.ndim != 1 or b.shape[0] != n_out):
        raise RuntimeError(f"{prefix}, expected bias to be 1-dimensional with {n_out} elements, "
                           f"but got bias of size {list(b.shape)} instead")
    if not transposed:
        padded = [s + 2 * p for s, p in zip(xs[2:], padding)]
        window = [d * (k - 1) + 1 for d, k in zip(dilation, ws[2:])]
        if any(p < k for p, k in zip(padded, window)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, window))}). Kernel size can't be greater "
                "than actual input size")


def _check_dtypes(x, w, b):
    xn, wn = _dtype_name(x), _dtype_name(w)
    if xn != wn:
        if xn in ("float32", "bfloat16"):  # PyTorch's oneDNN path words it so
            raise RuntimeError(f"Input type ({_legacy_type(xn)}) and weight type "
                               f"({_legacy_type(wn)}) should be the same or input should be a "
                               "MKLDNN tensor and weight is a dense tensor")
        if jnp.iscomplexobj(x):
            raise RuntimeError(f"Input type ({_legacy_type(xn)}) and weight type "
                               f"({_legacy_type(wn)}) should be the same")
        raise RuntimeError(f"expected scalar type {_scalar_name(x)} but found {_scalar_name(w)}")
    if b is not None and _dtype_name(b) != xn:
        raise RuntimeError(f"Input type ({_CPP_NAMES[xn]}) and bias type "
                           f"({_CPP_NAMES[_dtype_name(b)]}) should be the same")


def _check_kernel(x, w, stride, padding, dilation, transposed, output_padding):
    """The checks of PyTorch's CPU kernels, after the shared ones."""
    dim = w.ndim - 2
    if x.dtype == jnp.bool_:
        kernel = ("slow_conv_transpose3d_out_cpu" if dim == 3 else "slow_conv_transpose2d_out_cpu"
                  ) if transposed else ("compute_columns3d" if dim == 3 else "slow_conv2d_cpu")
        _not_implemented(kernel, x)
    if any(k <= 0 for k in w.shape[2:]):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + _spatial_names(w.shape[2:], "kernel"))
    if not transposed:
        if any(d == 0 for d in dilation):
            raise RuntimeError("non-positive dilation is not supported")
        return
    if any(d == 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + _spatial_names(dilation, "dilation", ", "))
    if any(p >= s and p >= d for p, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join((_spatial_names(output_padding, "output_padding", fill=0),
                        _spatial_names(stride, "stride"), _spatial_names(dilation, "dilation"))))
    sizes = x.shape[2:]
    out = _transposed_size(sizes, w.shape[2:], stride, padding, dilation, output_padding)
    if any(o < 1 for o in out):
        lead = (1,) if dim == 1 else ()  # PyTorch runs 1-d as 2-d and prints the extra 1
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, lead + tuple(sizes)))}). "
            f"Calculated output size per channel: ({' x '.join(map(str, lead + tuple(out)))}). "
            "Output size is too small")


def _transposed_size(sizes, kernel, stride, padding, dilation, output_padding):
    return [(i - 1) * s - 2 * p + d * (k - 1) + op + 1
            for i, k, s, p, d, op in zip(sizes, kernel, stride, padding, dilation,
                                         output_padding)]


@op(tensors=("input", "weight", "bias"), promote="none", grad="ConvolutionBackward0",
    method=False, saves=("input", "weight"))
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """A (transposed) convolution over weight.dim() - 2 spatial dims of a batched input."""
    if bias is not None and not hasattr(bias, "dtype"):
        raise TypeError(f"convolution(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(bias).__name__}")
    dim = weight.ndim - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    output_padding = _expand(output_padding, "output_padding", dim)
    _check_shapes(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                  groups)
    _check_dtypes(input, weight, bias)
    _check_kernel(input, weight, stride, padding, dilation, transposed, output_padding)
    out = conv_cpu.convolution(input, weight, stride, padding, dilation, transposed,
                               output_padding, groups)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * dim).astype(out.dtype)
    return out.astype(input.dtype)


# -- conv1d/2d/3d and conv_transpose1d/2d/3d: argument handling around the convolution row ---

_CONV_OVERLOADS = (
    "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, "
    "tuple of ints padding = 0, tuple of ints dilation = 1, int groups = 1)",
    "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, "
    "str padding = \"valid\", tuple of ints dilation = 1, int groups = 1)")


def _type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_ints(v) -> bool:
    return _is_int(v) or (isinstance(v, (tuple, list)) and all(_is_int(x) for x in v))


class _D:
    """_dispatch imports the op table, so it is looked up on first use."""

    def __getattr__(self, name):
        from .. import _dispatch
        for n in ("PREPARED", "dispatch"):
            setattr(self, n, getattr(_dispatch, n))
        return getattr(self, name)


_DISPATCH = _D()


def _run(name: str, tensors: tuple, statics: tuple):
    return _DISPATCH.dispatch(_DISPATCH.PREPARED[name], tensors, statics)


def _conv_args(name, input, weight, bias, stride, padding, dilation, groups):
    """PyTorch's argument-parser error for a conv1d/2d/3d call it cannot match."""
    given = {"bias": (bias, bias is None or isinstance(bias, Tensor)),
             "stride": (stride, _is_ints(stride)),
             "padding": (padding, isinstance(padding, str) or _is_ints(padding)),
             "dilation": (dilation, _is_ints(dilation)), "groups": (groups, _is_int(groups))}
    bad = [k for k, (_, ok) in given.items() if not ok]
    if isinstance(input, Tensor) and isinstance(weight, Tensor) and not bad:
        return
    got = ", ".join([_type_name(input), _type_name(weight)]
                    + [f"{k}={_type_name(given[k][0])}" for k in bad])
    raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                    "expected one of:\n" + "".join(f" * {s}\n" for s in _CONV_OVERLOADS))


def _check_rank(name: str, input, dim: int) -> bool:
    """Whether input is batched; PyTorch's error when it has neither rank."""
    if input.dim() not in (dim + 1, dim + 2):
        raise RuntimeError(f"Expected {dim + 1}D (unbatched) or {dim + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    return input.dim() == dim + 2


def _as_tuple(v, dim):
    """An int argument as PyTorch's parser passes it on: one value per spatial dim."""
    return (v,) * dim if _is_int(v) else tuple(v)


def _conv_same(x, weight, bias, stride, dilation, groups):
    """padding='same': equal padding where the window allows, the odd one extra on the right
    (the input is padded first, as PyTorch does)."""
    k = weight.dim()
    dim = k - 2
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if k != x.dim():
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight"
                           f"{list(weight.shape)}, but got {x.dim()}-dimensional input of size "
                           f"{list(x.shape)} instead")
    for v, n in ((stride, "stride"), (dilation, "dilation")):
        if len(v) not in (1, dim):
            raise RuntimeError(f"{n} cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = dilation * dim if len(dilation) == 1 else dilation
    total = [d * (s - 1) for d, s in zip(dilation, weight.shape[2:])]
    left = [t // 2 for t in total]
    extra = [t - 2 * lo for t, lo in zip(total, left)]
    if any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created",
                      stacklevel=5)  # 5: + the composite's x64-scope wrapper
        pad = []
        for e in reversed(extra):  # constant_pad_nd lists the last dim first
            pad += [0, e]
        x = _run("constant_pad_nd", (x,), (tuple(pad), 0))
    return _run("convolution", (x, weight, bias),
                (stride, tuple(left), dilation, False, (0,) * dim, groups))


def _convnd(name, dim, input, weight, bias, stride, padding, dilation, groups):
    _conv_args(name, input, weight, bias, stride, padding, dilation, groups)
    batched = _check_rank(name, input, dim)
    x = input if batched else input.unsqueeze(0)
    stride, dilation = _as_tuple(stride, dim), _as_tuple(dilation, dim)
    if padding == "same":
        out = _conv_same(x, weight, bias, stride, dilation, groups)
    elif isinstance(padding, str) and padding != "valid":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = (0,) if padding == "valid" else _as_tuple(padding, dim)
        out = _run("convolution", (x, weight, bias),
                   (stride, padding, dilation, False, (0,) * dim, groups))
    return out if batched else out.squeeze(0)


@function(method=False)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over (N, C, L) or (C, L); padding may be 'same' or 'valid'."""
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@function(method=False)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over (N, C, H, W) or (C, H, W); padding may be 'same' or 'valid'."""
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@function(method=False)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over (N, C, D, H, W) or (C, D, H, W); padding may be 'same' or 'valid'."""
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _transpose_args(name, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    for pos, (arg, v) in enumerate((("input", input), ("weight", weight)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{_type_name(v)}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"{name}(): argument 'bias' (position 3) must be Tensor, not "
                        f"{_type_name(bias)}")
    for arg, v in (("stride", stride), ("padding", padding), ("output_padding", output_padding),
                   ("dilation", dilation)):
        if not _is_ints(v):
            raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not "
                            f"{_type_name(v)}")
    if not _is_int(groups):
        raise TypeError(f"{name}(): argument 'groups' must be int, not {_type_name(groups)}")


def _conv_transposend(name, dim, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    _transpose_args(name, input, weight, bias, stride, padding, output_padding, groups,
                    dilation)
    batched = _check_rank(name, input, dim)
    x = input if batched else input.unsqueeze(0)
    out = _run("convolution", (x, weight, bias),
               (_as_tuple(stride, dim), _as_tuple(padding, dim), _as_tuple(dilation, dim), True,
                _as_tuple(output_padding, dim), groups))
    return out if batched else out.squeeze(0)


@function(method=False)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose (gradient) of conv1d; weight is (in, out / groups, kW)."""
    return _conv_transposend("conv_transpose1d", 1, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@function(method=False)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose (gradient) of conv2d; weight is (in, out / groups, kH, kW)."""
    return _conv_transposend("conv_transpose2d", 2, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@function(method=False)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transpose (gradient) of conv3d; weight is (in, out / groups, kD, kH, kW)."""
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)
