"""nn.functional convolution, pad, unfold and fold: the functions around the rows of
src/torchjax/_ops/conv.py, padding.py and fold.py.

conv1d ... conv_transpose3d are torch.conv1d ... (as in PyTorch, where F.conv2d is
torch.conv2d). pad checks its arguments and routes by mode to one padding row; unfold / fold
are the im2col / col2im rows with PyTorch's argument parsing.
"""

from __future__ import annotations

import numbers

from ..._dispatch import PREPARED, dispatch
from ..._dtypes import bool as _BOOL
from ..._ops.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from ..._tensor import Tensor

__all__: list[str] = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                      "conv_transpose3d", "pad", "unfold", "fold"]


def _ntuple(n: int):
    """PyTorch's _single / _pair / _triple: an iterable as a tuple, a value repeated n times."""
    def parse(x):
        if isinstance(x, (list, tuple)) or (hasattr(x, "__iter__") and not isinstance(x, str)):
            return tuple(x)
        return (x,) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _ints(fname: str, arg: str, pos: int, v) -> tuple:
    """v as a tuple of ints, or PyTorch's argument-parser TypeError."""
    if isinstance(v, Tensor) or not isinstance(v, (tuple, list)):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {'Tensor' if isinstance(v, Tensor) else type(v).__name__}")
    for i, x in enumerate(v):
        # (as PyTorch's parser: a one-element integer tensor counts as an int, x-transformers'
        # F.pad(t, (lens.amax(), 0)))
        if isinstance(x, Tensor) and x.numel() == 1 and not x.is_floating_point() \
                and not x.is_complex() and x.dtype is not _BOOL:
            continue
        if not isinstance(x, numbers.Integral) or isinstance(x, bool):
            raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                            f"but found element of type {type(x).__name__} at pos {i}")
    return tuple(int(x) for x in v)


def _require_tensor(fname: str, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(v).__name__}")


def _run(name: str, input, *statics):
    return dispatch(PREPARED[name], (input,), statics)


_NON_CONSTANT = {"reflect": "reflection_pad", "replicate": "replication_pad"}


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) / 2 dims of input; pad lists (before, after) from the last dim
    backwards. mode: 'constant' (with value, any number of dims), 'reflect', 'replicate' or
    'circular' (1 to 3 trailing dims of a 2-d to 5-d input)."""
    _require_tensor("pad", input)
    pad = _ints("pad", "pad", 2, pad)
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not "
                        f"{type(mode).__name__}")
    if value is not None and (isinstance(value, complex) or not isinstance(value, numbers.Real)):
        raise TypeError(f"pad(): argument 'value' (position 4) must be float, not "
                        f"{type(value).__name__}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    ndim = input.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    if mode == "constant":
        return _run("constant_pad_nd", input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    dims = len(pad) // 2
    if not 1 <= dims <= 3 or ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _run("_pad_circular", input, pad)
    return _run(f"{_NON_CONSTANT[mode]}{dims}d", input, pad)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L)."""
    _require_tensor("im2col", input)
    args = [_ints("im2col", n, i, _pair(v)) for i, (n, v) in enumerate(
        (("kernel_size", kernel_size), ("dilation", dilation), ("padding", padding),
         ("stride", stride)), 2)]
    return _run("im2col", input, *args)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding local blocks back into an image: (N, C * prod(kernel_size), L) ->
    (N, C, *output_size)."""
    _require_tensor("col2im", input)
    args = [_ints("col2im", n, i, _pair(v)) for i, (n, v) in enumerate(
        (("output_size", output_size), ("kernel_size", kernel_size), ("dilation", dilation),
         ("padding", padding), ("stride", stride)), 2)]
    return _run("col2im", input, *args)
