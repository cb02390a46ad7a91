"""Convolution rows (torch.convolution, im2col / col2im) and padding rows (one per mode).

PyTorch's conv1d/2d/3d and conv_transpose1d/2d/3d all end in one native op,
torch.convolution, whose grad_fn is ConvolutionBackward0; here too: the six function forms
below only check their arguments, resolve padding='same'/'valid', and batch an unbatched
input (which, as in PyTorch, ends in SqueezeBackward1). The one convolution row serves every
spatial rank through lax.conv_general_dilated.

Padding is one row per mode because PyTorch names each mode's node differently:
constant_pad_nd (ConstantPadNdBackward0), reflection_pad{1,2,3}d (ReflectionPad1DBackward0...),
replication_pad{1,2,3}d (ReplicationPad1DBackward0...) and _pad_circular (CopySlices).
F.pad (nn/_functional/conv.py) routes between them. im2col / col2im back F.unfold / F.fold.
"""

from __future__ import annotations

import math
import numbers
import warnings

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from .._tensor import _TENSOR_TYPE_NAMES, Tensor
from ._registry import function, op

# rows that PyTorch keeps in torch._C._nn: reached through F.pad / F.unfold / F.fold only
_C_NN = dict(function=False, method=False, namespace="torch._C._nn")


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


def _dimension_numbers(dim: int):
    s = "DHW"[3 - dim:]
    return ("NC" + s, "OI" + s, "NC" + s)


def _accumulator(x):
    # half precision accumulates in float32, as PyTorch's CPU kernels do
    return jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else None


def _conv(x, w, stride, padding, dilation, groups):
    return lax.conv_general_dilated(
        x, w, stride, [(p, p) for p in padding], rhs_dilation=dilation,
        dimension_numbers=_dimension_numbers(w.ndim - 2), feature_group_count=groups,
        preferred_element_type=_accumulator(x))


def _conv_transposed(x, w, stride, padding, dilation, output_padding, groups):
    """The transpose of a convolution as a convolution of the stride-dilated input."""
    dim = w.ndim - 2
    kernel = w.shape[2:]
    c_in, c_out_g = w.shape[:2]
    # PyTorch stores (in, out / groups, *kernel); regroup to (out, in / groups, *kernel)
    # and flip the window
    w = w.reshape((groups, c_in // groups, c_out_g) + kernel).swapaxes(1, 2)
    w = jnp.flip(w.reshape((groups * c_out_g, c_in // groups) + kernel),
                 axis=tuple(range(2, 2 + dim)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + op)
            for k, p, d, op in zip(kernel, padding, dilation, output_padding)]
    return lax.conv_general_dilated(
        x, w, (1,) * dim, pads, lhs_dilation=stride, rhs_dilation=dilation,
        dimension_numbers=_dimension_numbers(dim), feature_group_count=groups,
        preferred_element_type=_accumulator(x))


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
    if transposed:
        out = _conv_transposed(input, weight, stride, padding, dilation, output_padding, groups)
    else:
        out = _conv(input, weight, stride, padding, dilation, groups)
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


# -- padding ---------------------------------------------------------------------------------

def _pad_pairs(pad, ndim):
    """(before, after) for each dim; pad lists the last dim first, as in PyTorch."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pairs


_FILL_TYPES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
               "uint8": "uint8_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
               "float32": "float", "float64": "double"}


def _fill_value(value, dtype):
    """value in dtype; PyTorch's error when it does not fit (integers truncate)."""
    name = _dtypes.from_jax(dtype).name
    if name == "bool" or name.startswith("complex"):
        return np.asarray(value).astype(dtype)
    v = complex(value)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        fits = v.imag == 0 and math.isfinite(v.real) and info.min <= math.trunc(v.real) <= info.max
        result = math.trunc(v.real) if fits else None
    else:
        big = float(jnp.finfo(dtype).max)
        fits = v.imag == 0 and (not math.isfinite(v.real) or abs(v.real) <= big)
        result = v.real
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_FILL_TYPES[name]} without "
                           "overflow")
    return np.asarray(result).astype(dtype)


@op(promote="none", method=False, grad="ConstantPadNdBackward0", saves=())
def constant_pad_nd(input, pad, value=0):
    """input padded with value; pad lists (before, after) from the last dim backwards, and a
    negative amount crops."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{input.ndim}dimensions.")
    pairs = _pad_pairs(pad, input.ndim)
    for size, (lo, hi) in zip(input.shape, pairs):
        if size + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    fill = _fill_value(value, input.dtype)
    return lax.pad(input, fill, [(lo, hi, 0) for lo, hi in pairs])


def _take_padded(x, pad, index):
    """Pad the trailing dims by gathering: index(positions, size) maps each output position
    (counted from the input's first element) to the input element it copies."""
    for axis, (lo, hi) in enumerate(_pad_pairs(pad, x.ndim)):
        if (lo, hi) != (0, 0):
            size = x.shape[axis]
            x = jnp.take(x, index(np.arange(size + lo + hi) - lo, size), axis=axis)
    return x


def _reflect_index(i, n):
    return (n - 1) - np.abs((n - 1) - np.abs(i))


def _replicate_index(i, n):
    return np.clip(i, 0, n - 1)


_TOO_SMALL = {
    ("reflect", 1): "input (W: {W}) is too small. Calculated output W: {oW}",
    ("replicate", 1): "input (W: {W}) is too small. Calculated output W: {oW}",
    ("reflect", 2): "input (H: {H}, W: {W}) is too small. Calculated output H: {oH} W: {oW}",
    ("replicate", 2): "input (H: {H}, W: {W} ) is too small. Calculated output H: {oH} W: {oW}",
    ("reflect", 3): "input (D: {D} H: {H}, W: {W}) is too small. Calculated output D: {oD} "
                    "H: {oH} W: {oW}",
    ("replicate", 3): "input (D: {D} H: {H}, W: {W}) is too small. Calculated output D: {oD} "
                      "H: {oH} W: {oW}",
}


def _check_pad_input(x, pad, dim, mode):
    """The checks of PyTorch's reflection_pad / replication_pad kernels."""
    shape = list(x.shape)
    batched = x.ndim == dim + 2
    if x.ndim not in (dim + 1, dim + 2) or 0 in shape[int(batched):]:
        raise RuntimeError(f"Expected {dim + 1}D or {dim + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{shape}")
    if len(pad) != 2 * dim:
        raise RuntimeError(f"padding size is expected to be {2 * dim}, but got: {len(pad)}")
    sizes = shape[-dim:]
    if mode == "reflect":
        for i in range(dim):  # PyTorch checks the width first, then height and depth
            lo, hi, size = pad[2 * i], pad[2 * i + 1], sizes[dim - 1 - i]
            if lo >= size or hi >= size:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                    f"{x.ndim - 1 - i} of input {shape}")
    out = [s + pad[2 * (dim - 1 - i)] + pad[2 * (dim - 1 - i) + 1] for i, s in enumerate(sizes)]
    if all(o < 1 for o in out):
        names = "DHW"[3 - dim:]
        fields = dict(zip(names, sizes)) | {"o" + n: o for n, o in zip(names, out)}
        raise RuntimeError(_TOO_SMALL[mode, dim].format(**fields))
    if any(o < 0 for o in out):
        bad = next(o for o in out if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{shape[:x.ndim - dim] + out}")


def _reflection_pad(input, padding, dim):
    pad = [int(p) for p in padding]
    _check_pad_input(input, pad, dim, "reflect")
    return _take_padded(input, pad, _reflect_index)


def _replication_pad(input, padding, dim):
    pad = [int(p) for p in padding]
    _check_pad_input(input, pad, dim, "replicate")
    return _take_padded(input, pad, _replicate_index)


@op(promote="none", grad="ReflectionPad1DBackward0", **_C_NN)
def reflection_pad1d(input, padding):
    """Pad the last dim by reflecting about its edges (the edge itself is not repeated)."""
    return _reflection_pad(input, padding, 1)


@op(promote="none", grad="ReflectionPad2DBackward0", **_C_NN)
def reflection_pad2d(input, padding):
    """Pad the last 2 dims by reflecting about their edges."""
    return _reflection_pad(input, padding, 2)


@op(promote="none", grad="ReflectionPad3DBackward0", **_C_NN)
def reflection_pad3d(input, padding):
    """Pad the last 3 dims by reflecting about their edges."""
    return _reflection_pad(input, padding, 3)


@op(promote="none", grad="ReplicationPad1DBackward0", **_C_NN)
def replication_pad1d(input, padding):
    """Pad the last dim by repeating its edge values."""
    return _replication_pad(input, padding, 1)


@op(promote="none", grad="ReplicationPad2DBackward0", **_C_NN)
def replication_pad2d(input, padding):
    """Pad the last 2 dims by repeating their edge values."""
    return _replication_pad(input, padding, 2)


@op(promote="none", grad="ReplicationPad3DBackward0", **_C_NN)
def replication_pad3d(input, padding):
    """Pad the last 3 dims by repeating their edge values."""
    return _replication_pad(input, padding, 3)


@op(promote="none", function=False, method=False, grad="CopySlices", saves=())
def _pad_circular(input, padding):
    """Pad the last len(padding) / 2 dims by wrapping around; negative amounts crop first, and
    the wrap then repeats the cropped tensor."""
    pad = [int(p) for p in padding]
    pairs = _pad_pairs(pad, input.ndim)
    for size, (lo, hi) in zip(input.shape, pairs):
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if size + min(lo, 0) + min(hi, 0) == 0 and max(lo, hi) > 0:
            # nothing is left to wrap (PyTorch would copy uninitialised memory)
            raise RuntimeError("Padding value causes wrapping around more than once.")
    x = lax.pad(input, jnp.zeros((), input.dtype), [(min(lo, 0), min(hi, 0), 0)
                                                     for lo, hi in pairs])
    return _take_padded(x, [max(p, 0) for p in pad], lambda i, n: np.mod(i, n))


# -- im2col / col2im (F.unfold / F.fold) -----------------------------------------------------

def _pair_arg(values, name):
    vals = [int(v) for v in values]
    if len(vals) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(vals)}")
    return vals


def _check_window(kernel, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kh} kernel_width: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} "
                           f"stride_width: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dh} dilation_width: {dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} "
                           f"pad_width: {pw}")


def _blocks(size, kernel, dilation, padding, stride):
    """The number of sliding-window positions along each spatial dim."""
    return [(s + 2 * p - (d * (k - 1) + 1)) // st + 1
            for s, k, d, p, st in zip(size, kernel, dilation, padding, stride)]


def _window_slices(kernel, dilation, stride, blocks):
    """For each kernel offset (row-major), the strided slices of the padded image it sees."""
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            yield tuple(slice(o * d, o * d + s * (b - 1) + 1, s)
                        for o, d, s, b in zip((i, j), dilation, stride, blocks))


def _tup(v):
    return f"({v[0]}, {v[1]})"


@op(promote="none", grad="Im2ColBackward0", **_C_NN, saves=())
def im2col(input, kernel_size, dilation, padding, stride):
    """Sliding blocks of a (N, C, H, W) or (C, H, W) input as columns: (N, C*kH*kW, L)."""
    kernel, dilation, padding, stride = (
        _pair_arg(v, n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                     (padding, "padding"), (stride, "stride")))
    _check_window(kernel, dilation, padding, stride)
    if input.ndim < 3:
        n = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got 2)")
    shape = list(input.shape)
    if input.ndim not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape}")
    blocks = _blocks(shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {_tup(shape[-2:])}, kernel_size={_tup(kernel)}, "
            f"dilation={_tup(dilation)}, padding={_tup(padding)}, calculated shape of the array "
            f"of sliding blocks as {_tup(blocks)}, but its components must be at least one.")
    if jnp.issubdtype(input.dtype, jnp.integer):
        _not_implemented("im2col_out_cpu", input)
    x = input if input.ndim == 4 else input[None]
    x = jnp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    cols = jnp.stack([x[(..., *s)] for s in _window_slices(kernel, dilation, stride, blocks)],
                     axis=2)
    out = cols.reshape(x.shape[0], -1, blocks[0] * blocks[1])
    return out if input.ndim == 4 else out[0]


@op(promote="none", grad="Col2ImBackward0", **_C_NN, saves=())
def col2im(input, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of im2col: sums columns (N, C*kH*kW, L) back into (N, C, H, W) images."""
    size = _pair_arg(output_size, "output_size")
    kernel, dilation, padding, stride = (
        _pair_arg(v, n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                     (padding, "padding"), (stride, "stride")))
    _check_window(kernel, dilation, padding, stride)
    shape = list(input.shape)
    if input.ndim not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {shape}")
    c_k = shape[-2]
    if c_k % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c_k} and "
                           f"kernel_size={_tup(kernel)}.")
    blocks = _blocks(size, kernel, dilation, padding, stride)
    given = (f"Given output_size={_tup(size)}, kernel_size={_tup(kernel)}, "
             f"dilation={_tup(dilation)}, padding={_tup(padding)}, stride={_tup(stride)}, ")
    if shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"{given}expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={shape[-1]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as "
                           f"{_tup(blocks)}, which is too small (non-positive)")
    if jnp.issubdtype(input.dtype, jnp.integer):
        _not_implemented("col2im_out_cpu", input)
    x = input if input.ndim == 3 else input[None]
    n, c = x.shape[0], c_k // (kernel[0] * kernel[1])
    cols = x.reshape(n, c, kernel[0] * kernel[1], blocks[0], blocks[1])
    out = jnp.zeros((n, c) + tuple(s + 2 * p for s, p in zip(size, padding)), input.dtype)
    for k, s in enumerate(_window_slices(kernel, dilation, stride, blocks)):
        out = out.at[(..., *s)].add(cols[:, :, k])
    out = out[..., padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]
    return out if input.ndim == 3 else out[0]
