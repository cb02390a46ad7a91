"""nn.functional vision, distance and activation functions that are not single rows of the op
table: they check and route Python-level arguments (interpolate's size / scale_factor / mode),
read values (one_hot's class count) or draw random numbers (gumbel_softmax)."""

from __future__ import annotations

import numbers
import warnings

import jax
import numpy as np

from ... import _creation
from ..._dispatch import call_op
from ..._dtypes import int64
from ..._tensor import Tensor

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid", "one_hot", "gumbel_softmax"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")

# the upsampling row of each (mode, spatial dims)
_KERNELS = {
    ("nearest", 1): "upsample_nearest1d", ("nearest", 2): "upsample_nearest2d",
    ("nearest", 3): "upsample_nearest3d", ("nearest-exact", 1): "_upsample_nearest_exact1d",
    ("nearest-exact", 2): "_upsample_nearest_exact2d",
    ("nearest-exact", 3): "_upsample_nearest_exact3d", ("linear", 1): "upsample_linear1d",
    ("bilinear", 2): "upsample_bilinear2d", ("trilinear", 3): "upsample_trilinear3d",
    ("bicubic", 2): "upsample_bicubic2d",
}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_int(v):
    return isinstance(v, numbers.Integral) or (isinstance(v, Tensor)
                                               and not v.is_floating_point())


def _output_or_scales(input, size, scale_factor, nd):
    """PyTorch's validation of size / scale_factor: (output_size, scale_factors), one None."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = list(input.shape[2:])
    if size is not None:
        if not isinstance(size, (list, tuple)):
            size = [size] * nd
        elif len(size) != nd:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got input "
                f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
                "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                "format.")
        if not all(_is_int(s) for s in size):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            "Tuple[int, int, int], but got size with types "
                            f"{[type(s) for s in size]}")
        return [int(s) for s in size], None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if not isinstance(scale_factor, (list, tuple)):
        return None, [float(scale_factor)] * nd
    if len(scale_factor) != nd:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {spatial} and scale_factor of shape "
            f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format.")
    return None, [float(s) for s in scale_factor]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes input (N, C, *spatial) to size, or by scale_factor, with PyTorch's index math."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    output_size, scale_factors = _output_or_scales(input, size, scale_factor, nd)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        # the kernel then derives its scale from the sizes, not from the user's factor
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(nd)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        raise NotImplementedError(f"interpolate(antialias=True) is not supported (mode='{mode}')")
    kernel = _KERNELS.get((mode, nd))
    sizes = tuple(output_size) if output_size is not None else None
    scales = tuple(scale_factors) if scale_factors is not None else None
    if kernel is not None and mode.startswith("nearest"):
        return call_op(kernel, input, sizes, scales)
    if kernel is not None:
        return call_op(kernel, input, sizes, align_corners, scales)
    if mode == "area" and 1 <= nd <= 3:
        from .. import functional as F
        return getattr(F, f"adaptive_avg_pool{nd}d")(input, output_size)
    if mode in _NEEDS and 3 <= input.dim() <= 5:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_NEEDS[mode]}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
        "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input at the normalised [-1, 1] coordinates of grid (x first)."""
    if mode not in _GRID_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    kernel = "grid_sampler_2d" if input.dim() == 4 else "grid_sampler_3d"
    return call_op(kernel, input, grid, _GRID_MODES[mode], _GRID_PADDINGS[padding_mode],
                   align_corners)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine matrices theta (N, 2, 3) or (N, 3, 4)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return call_op("affine_grid_generator", theta, tuple(int(s) for s in size), align_corners)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding of class indices; num_classes=-1 means max + 1."""
    if tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1 and tensor._data.size == 0:
        # known from the shape alone, so a traced call raises it too instead of breaking
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if isinstance(tensor._data, jax.core.Tracer) and num_classes != -1:
        return call_op("one_hot", tensor, int(num_classes))  # traced: values are unknown
    # the checks read the values, as PyTorch's do (a host sync)
    values = np.asarray(tensor._data)
    if values.size:
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(values.max()) + 1
        elif values.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return call_op("one_hot", tensor, int(num_classes))


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); hard=True gives one-hot samples whose gradient is
    the soft sample's (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # -log(Exponential(1)) is Gumbel(0, 1)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
