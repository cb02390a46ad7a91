"""Vision and distance rows: pixel_shuffle, channel_shuffle, the upsampling kernels behind
F.interpolate, grid_sampler, affine_grid_generator, cosine_similarity, pairwise_distance, pdist,
normalize and one_hot.

The upsampling rows are PyTorch's kernels (upsample_nearest2d, upsample_bilinear2d, ...), one
row per kernel so that grad_fn names match. Their source indices and weights depend only on
static sizes, so they are computed once in numpy with PyTorch's own float arithmetic (float32,
or float64 for float64 input) and a kernel is, per spatial axis, a gather and a weighted sum.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from ._nograd import no_derivative
from ._registry import function, op
from .reduction import _vector_norm
from .shape import _dim, _fmt

_NN = dict(function=False, method=False, namespace="torch.nn.functional")
# PyTorch's kernels behind the F.interpolate / F.one_hot / F.rrelu composites (torch._C._nn)
_KERNEL = dict(function=False, method=False, namespace="torch._C._nn")


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


def _compute_dtype(dtype):
    """PyTorch's CPU kernels compute half-precision inputs in float32."""
    return jnp.float64 if dtype == jnp.float64 else jnp.float32


# -- pixel_shuffle, pixel_unshuffle, channel_shuffle --------------------------------------------

def _check_factor(name, what, factor, ndim):
    if ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


@op(method=False, grad="PixelShuffleBackward0", needs=())
def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    r = upscale_factor
    _check_factor("pixel_shuffle", "upscale_factor", r, input.ndim)
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


@op(method=False, grad="PixelUnshuffleBackward0", needs=())
def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    r = downscale_factor
    _check_factor("pixel_unshuffle", "downscale_factor", r, input.ndim)
    *batch, c, h, w = input.shape
    for what, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def _channel_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {_fmt(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    b, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(b, groups, c // groups, *rest)
    return jnp.swapaxes(x, 1, 2).reshape(input.shape)


@op(method=False, grad="ChannelShuffleBackward0", needs=())
def channel_shuffle(input, groups):
    """Channels (g, C/g) read out as (C/g, g): interleaves the groups."""
    return _channel_shuffle(input, groups)


_NATIVE_SHUFFLE_GRAD = no_derivative("derivative for aten::native_channel_shuffle is not "
                                     "implemented")


@op(method=False, grad="NotImplemented", needs=())
def native_channel_shuffle(input, groups):
    """channel_shuffle without a derivative (PyTorch's grad_fn=<NotImplemented>)."""
    return _NATIVE_SHUFFLE_GRAD(_channel_shuffle(input, groups))


# -- upsampling kernels -------------------------------------------------------------------------
# Index math of PyTorch's UpSample.h, in numpy with the C++ float types: `ft` is the type PyTorch
# computes the source coordinates in (float32, or float64 for float64 input).

def _scales_value(scale, in_size, out_size, ft):
    """1 / scale_factor when the user's scale is used, else in_size / out_size."""
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(in_size) / ft(out_size)


def _area_scale(in_size, out_size, align_corners, scale, ft):
    if align_corners:
        return ft(in_size - 1) / ft(out_size - 1) if out_size > 1 else ft(0)
    return _scales_value(scale, in_size, out_size, ft)


def _source_index(ratio, out_size, align_corners, cubic, ft):
    dst = np.arange(out_size).astype(ft)
    if align_corners:
        return ratio * dst
    src = ratio * (dst + ft(0.5)) - ft(0.5)
    # linear modes clamp negative coordinates to 0; cubic keeps them (its weights depend on it)
    return src if cubic else np.maximum(src, ft(0))


def _nearest_taps(in_size, out_size, scale, exact, shortcuts):
    dst = np.arange(out_size)
    s = _scales_value(scale, in_size, out_size, np.float32)
    if exact:
        # floorf((dst + 0.5) * scale): a double product rounded to float, then floored
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32)).astype(np.int64)
    elif shortcuts and out_size == in_size:
        src = dst
    elif shortcuts and out_size == 2 * in_size:
        src = dst >> 1
    else:
        src = np.floor(dst.astype(np.float32) * s).astype(np.int64)
    return [(np.minimum(src, in_size - 1), None)]


def _resample_nearest(x, fwd, bwd):
    """_resample(x, fwd) whose gradient is that of _resample(x, bwd)."""
    if all(np.array_equal(f[0][0], b[0][0]) for (_, f), (_, b) in zip(fwd, bwd)):
        return _resample(x, fwd)

    @jax.custom_vjp
    def resample(x):
        return _resample(x, fwd)

    def backward(_, ct):
        zero = jnp.zeros(x.shape, x.dtype)
        return jax.vjp(lambda z: _resample(z, bwd), zero)[1](ct)

    resample.defvjp(lambda x: (resample(x), None), backward)
    return resample(x)


def _linear_taps(in_size, out_size, align_corners, scale, ft):
    if in_size == out_size:
        return [(np.arange(out_size), None)]
    ratio = _area_scale(in_size, out_size, align_corners, scale, ft)
    real = _source_index(ratio, out_size, align_corners, False, ft)
    i0 = np.minimum(real.astype(np.int64), in_size - 1)
    i1 = i0 + (i0 < in_size - 1)
    lam1 = np.clip(real - i0.astype(ft), ft(0), ft(1)).astype(ft)
    return [(i0, ft(1) - lam1), (i1, lam1)]


def _cubic_coefficients(t, one):
    """The four weights of PyTorch's cubic convolution (A = -0.75) at fraction t."""
    a = -0.75 * one

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_taps(in_size, out_size, align_corners, scale, ft):
    ratio = _area_scale(in_size, out_size, align_corners, scale, ft)
    real = _source_index(ratio, out_size, align_corners, True, ft)
    idx = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam = np.clip(real - idx.astype(ft), ft(0), ft(1)).astype(ft)
    coeffs = _cubic_coefficients(lam, ft(1))
    # taps beyond the border read the border value
    return [(np.clip(idx - 1 + j, 0, in_size - 1), c.astype(ft)) for j, c in enumerate(coeffs)]


def _resample(x, taps_per_axis):
    """Per spatial axis, last first (PyTorch's order of summation): sum of gathers * weights."""
    for axis, taps in reversed(taps_per_axis):
        out = None
        for idx, w in taps:
            g = jnp.take(x, jnp.asarray(idx), axis=axis)
            if w is not None:
                shape = [1] * x.ndim
                shape[axis] = -1
                g = g * jnp.asarray(w, x.dtype).reshape(shape)
            out = g if out is None else out + g
        x = out
    return x


_DIM_NAMES = {1: "W", 2: "HW", 3: "DHW"}


def _upsample_sizes(input, output_size, scale_factors, nd):
    """The output's spatial sizes, after PyTorch's shape checks for an nd-d upsample kernel."""
    if input.ndim != nd + 2:
        raise RuntimeError(f"It is expected input_size equals to {nd + 2}, but got size "
                           f"{input.ndim}")
    in_sizes = tuple(input.shape[2:])
    if output_size is not None:
        out_sizes = tuple(int(s) for s in output_size)
    else:
        # C++ truncates the double product
        out_sizes = tuple(int(s * f) for s, f in zip(in_sizes, scale_factors))
    if min(in_sizes + out_sizes) <= 0:
        names = _DIM_NAMES[nd]
        ins = ", ".join(f"{n}: {s}" for n, s in zip(names, in_sizes))
        outs = ", ".join(f"{n}: {s}" for n, s in zip(names, out_sizes))
        sep = " and output" if nd == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({ins}){sep} ({outs})")
    if input.size == 0 and input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with "
                           f"sizes {_fmt(input.shape)}")
    return in_sizes, out_sizes


def _check_upsample_dtype(dt, nd, mode):
    """PyTorch's CPU kernels take floats, and uint8 except in linear / trilinear mode."""
    kind = {"nearest": "nearest", "nearest-exact": "nearest", "bicubic": "cubic"}.get(
        mode, "linear")
    if jnp.issubdtype(dt, jnp.inexact) or (dt == jnp.uint8 and kind == "nearest"):
        return
    if dt == jnp.uint8 and nd == 2:
        # PyTorch rounds uint8 bilinear / bicubic results with its own fixed-point weights
        raise NotImplementedError(f"interpolate(mode='{mode}') is not supported for uint8 input")
    if nd == 2 and kind != "cubic":
        kernel = f"upsample_{'nearest' if kind == 'nearest' else 'bilinear'}2d_channels_last"
    else:
        kernel = f"compute_indices_weights_{kind}"
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(dt)}'")


def _upsample(input, output_size, scale_factors, nd, mode, align_corners=False):
    in_sizes, out_sizes = _upsample_sizes(input, output_size, scale_factors, nd)
    scales = tuple(scale_factors) if scale_factors is not None else (None,) * nd
    dt = input.dtype
    _check_upsample_dtype(dt, nd, mode)
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        # PyTorch's backward kernels copy or halve indices at output sizes of 1x and 2x the
        # input, whatever the user's scale_factor; of the forward kernels only the 2-d one does
        fwd, bwd = ([(axis, _nearest_taps(i, o, s, exact, shortcuts))
                     for axis, i, o, s in zip(range(2, nd + 2), in_sizes, out_sizes, scales)]
                    for shortcuts in (nd == 2, True))
        return _resample_nearest(input, fwd, bwd)
    cd = _compute_dtype(dt)
    ft = np.float64 if cd == jnp.float64 else np.float32
    make = _cubic_taps if mode == "bicubic" else _linear_taps
    taps = [make(i, o, align_corners, s, ft) for i, o, s in zip(in_sizes, out_sizes, scales)]
    return _resample(input.astype(cd), list(zip(range(2, nd + 2), taps))).astype(dt)


def _nearest_row(name, nd, mode, grad):
    def kernel(input, output_size=None, scale_factors=None):
        return _upsample(input, output_size, scale_factors, nd, mode)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"PyTorch's {mode} upsampling of {nd} spatial dims (F.interpolate)."
    op(grad=grad, needs=(), **_KERNEL)(kernel)


def _interp_row(name, nd, mode, grad):
    def kernel(input, output_size=None, align_corners=False, scale_factors=None):
        return _upsample(input, output_size, scale_factors, nd, mode, align_corners)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"PyTorch's {mode} upsampling of {nd} spatial dims (F.interpolate)."
    op(grad=grad, needs=(), **_KERNEL)(kernel)


for _nd in (1, 2, 3):
    _nearest_row(f"upsample_nearest{_nd}d", _nd, "nearest", f"UpsampleNearest{_nd}DBackward0")
    _nearest_row(f"_upsample_nearest_exact{_nd}d", _nd, "nearest-exact",
                 f"UpsampleNearestExact{_nd}DBackward0")
_interp_row("upsample_linear1d", 1, "linear", "UpsampleLinear1DBackward0")
_interp_row("upsample_bilinear2d", 2, "bilinear", "UpsampleBilinear2DBackward0")
_interp_row("upsample_trilinear3d", 3, "trilinear", "UpsampleTrilinear3DBackward0")
_interp_row("upsample_bicubic2d", 2, "bicubic", "UpsampleBicubic2DBackward0")


# -- grid_sampler, affine_grid_generator --------------------------------------------------------

_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2


def _grid_checks(input, grid, interpolation_mode, nd):
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {_fmt(input.shape)} and grid with sizes "
                           f"{_fmt(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {_fmt(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_fmt(input.shape)} with "
                               f"dimension {i} being empty")
    if input.ndim != nd + 2 or grid.ndim != nd + 2:
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {_fmt(input.shape)} and "
                           f"grid with sizes {_fmt(grid.shape)}")
    if nd == 3 and interpolation_mode == _BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(grid.dtype)}")
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise NotImplementedError(f"\"grid_sampler_{nd}d_cpu_kernel_impl\" not implemented for "
                                  f"'{_type_name(input.dtype)}'")


def _unnormalize(coord, size, align_corners):
    """[-1, 1] to pixel coordinates (corner pixel centres, or the image's outer edges)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size):
    # the gradient is 0 where clipped, the bounds included, as in PyTorch
    hi = size - 1
    return jnp.where(coord <= 0, 0, jnp.where(coord >= hi, hi, coord)).astype(coord.dtype)


def _reflect(coord, twice_low, twice_high):
    """coord reflected into [twice_low / 2, twice_high / 2] (the gradient flips with it)."""
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = jnp.where(coord < lo, lo - coord, coord - lo)
    extra = jnp.fmod(c, span)
    flips = jnp.floor(c / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _pad_coordinates(coord, size, padding_mode, align_corners):
    if padding_mode == _BORDER:
        return _clip(coord, size)
    if padding_mode == _REFLECTION:
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _safe_coordinate(coord):
    # PyTorch maps coordinates that do not fit an int (and NaN / inf) to -100: out of bounds
    ok = jnp.isfinite(coord) & (jnp.abs(coord) < 2.0 ** 31 - 2)
    return jnp.where(ok, coord, -100.0).astype(coord.dtype)


def _gather(input, idx, sizes):
    """input (N, C, *sizes) at K integer-valued points per output: idx[d] (K, N, *out) gives
    dim d's coordinates. Returns (K, N, C, *out), 0 at points outside."""
    k, n = idx[0].shape[:2]
    c = input.shape[1]
    out_shape = idx[0].shape[2:]
    valid = True
    flat = 0
    for i, s in zip(idx, sizes):
        valid = valid & (i >= 0) & (i <= s - 1)
        flat = flat * s + jnp.clip(i, 0, s - 1).astype(jnp.int32)
    flat = jnp.moveaxis(flat, 0, 1).reshape(n, 1, -1)
    vals = jnp.take_along_axis(input.reshape(n, c, -1), flat, axis=2)
    vals = jnp.moveaxis(vals.reshape(n, c, k, *out_shape), 2, 0)
    return jnp.where(valid[:, :, None], vals, jnp.zeros((), input.dtype))


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners):
    dt = input.dtype
    cd = _compute_dtype(dt)
    input, grid = input.astype(cd), grid.astype(cd)
    sizes = input.shape[2:]
    nd = len(sizes)
    # grid[..., 0] indexes the last spatial dim (x = W), grid[..., 1] the one before, ...
    coords = [_unnormalize(grid[..., nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    if interpolation_mode == _BICUBIC:
        return _grid_bicubic(input, coords, sizes, padding_mode, align_corners).astype(dt)
    coords = [_safe_coordinate(_pad_coordinates(c, s, padding_mode, align_corners))
              for c, s in zip(coords, sizes)]
    if interpolation_mode == _NEAREST:
        return _gather(input, [jnp.round(c)[None] for c in coords], sizes)[0].astype(dt)
    lows = [jnp.floor(c) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    corners = list(itertools.product((0, 1), repeat=nd))
    idx = [jnp.stack([lo + corner[d] for corner in corners]) for d, lo in enumerate(lows)]
    weights = []
    for corner in corners:
        w = None
        for d in reversed(range(nd)):  # the x factor first, as PyTorch multiplies
            f = fracs[d] if corner[d] else 1 - fracs[d]
            w = f if w is None else w * f
        weights.append(w)
    vals = _gather(input, idx, sizes)
    return jnp.sum(vals * jnp.stack(weights)[:, :, None], axis=0).astype(dt)


def _grid_bicubic(input, coords, sizes, padding_mode, align_corners):
    (iy, ix), (h, w) = coords, sizes
    x0, y0 = jnp.floor(ix), jnp.floor(iy)
    one = jnp.ones((), ix.dtype)
    cx = jnp.stack(_cubic_coefficients(ix - x0, one))
    cy = jnp.stack(_cubic_coefficients(iy - y0, one))

    def taps(coord, size):
        # each of the 4 taps is padded on its own; their positions carry no gradient
        c = jnp.stack([coord + (k - 1) for k in range(4)])
        return jnp.trunc(_safe_coordinate(_pad_coordinates(c, size, padding_mode,
                                                           align_corners)))

    ty, tx = taps(y0, h), taps(x0, w)
    # 16 points: row i of the 4 x 4 neighbourhood, column j
    vals = _gather(input, [jnp.repeat(ty, 4, axis=0), jnp.concatenate([tx] * 4)], sizes)
    vals = vals.reshape(4, 4, *vals.shape[1:])
    rows = jnp.sum(vals * cx[None, :, :, None], axis=1)
    return jnp.sum(rows * cy[:, :, None], axis=0)


def _grid_row(nd):
    def kernel(input, grid, interpolation_mode, padding_mode, align_corners):
        _grid_checks(input, grid, interpolation_mode, nd)
        return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)

    kernel.__name__ = kernel.__qualname__ = f"grid_sampler_{nd}d"
    kernel.__doc__ = (f"Samples input (N, C, {nd} spatial dims) at the normalised coordinates of "
                      "grid (F.grid_sample).")
    op(tensors=("input", "grid"), promote="none", method=False,
       grad=f"GridSampler{nd}DBackward0")(kernel)


_grid_row(2)
_grid_row(3)


@function(name="grid_sampler", method=False)
def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler: grid_sampler_2d for 4-d input, grid_sampler_3d otherwise."""
    from .._dispatch import call_op
    name = "grid_sampler_2d" if input.dim() == 4 else "grid_sampler_3d"
    return call_op(name, input, grid, interpolation_mode, padding_mode, align_corners)


def _linspace_from_neg_one(steps, align_corners, dtype):
    if steps <= 1:
        return np.zeros(1, dtype)
    r = np.linspace(-1, 1, steps, dtype=np.float64).astype(dtype)
    if not align_corners:
        r = r * dtype(steps - 1) / dtype(steps)
    return r


@op(tensors=("theta",), method=False, grad="AffineGridGeneratorBackward0", needs=())
def affine_grid_generator(theta, size, align_corners):
    """The sampling grid (N, *spatial, nd) of the affine maps theta (N, nd, nd + 1)."""
    size = tuple(size)
    nd = len(size) - 2
    if theta.shape[0] != size[0]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, {nd + 1}].")
    ft = np.float64 if theta.dtype == jnp.float64 else np.float32
    # base coordinates (x, y[, z]) with x along the last spatial dim
    axes = [_linspace_from_neg_one(s, align_corners, ft) for s in size[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = [jnp.asarray(m, theta.dtype) for m in reversed(mesh)]
    out = []
    for k in range(nd):
        t = theta[:, k].reshape((size[0], nd + 1) + (1,) * nd)
        v = t[:, nd]
        for i in range(nd):
            v = base[i] * t[:, i] + v
        out.append(v)
    return jnp.stack(out, axis=-1)


# -- distances and normalize --------------------------------------------------------------------

def _clamped_norm(x, axis, eps):
    """The 2-norm over axis, at least eps; PyTorch clamps without autograd, so the gradient is
    the unclamped norm's."""
    n = _vector_norm(x, 2, (axis,), True)
    return n + jax.lax.stop_gradient(jnp.maximum(n, eps) - n)


@op(tensors=("x1", "x2"), method=False, grad="SumBackward1", saves={"x1": ("x1",), "x2": ("x2",)})
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / (max(|x1|, eps) * max(|x2|, eps)) along dim, after broadcasting."""
    if not jnp.issubdtype(x1.dtype, jnp.inexact):
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{_type_name(x1.dtype)}")
    shape = jnp.broadcast_shapes(x1.shape, x2.shape)
    d = _dim(dim, len(shape))
    a = jnp.broadcast_to(x1, shape).reshape(shape or (1,))
    b = jnp.broadcast_to(x2, shape).reshape(shape or (1,))
    r = jnp.sum((a / _clamped_norm(a, d, eps)) * (b / _clamped_norm(b, d, eps)), axis=d)
    return r.reshape(()) if not shape else r


@op(tensors=("x1", "x2"), promote="float", method=False, grad="NormBackward1",
    saves={"x1": ("result",), "x2": ("result",)})
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dim."""
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        return _vector_norm(diff.reshape(1), p, (0,), False).reshape(())
    return _vector_norm(diff, p, (diff.ndim - 1,), keepdim)


def _max_full_to_ties(a):
    """max(a) over the last axis whose gradient goes in full to every element equal to the max
    (PyTorch's pdist backward for p=inf)."""
    m = jnp.max(a, axis=-1)
    sel = jax.lax.stop_gradient((a == m[..., None]).astype(a.dtype))
    return jax.lax.stop_gradient(m) + jnp.sum(sel * (a - jax.lax.stop_gradient(a)), axis=-1)


@op(method=False, grad="PdistBackward0", saves=("input", "result"))
def pdist(input, p=2):
    """The p-norm distances between the rows of input (N, M), pairs i < j in row order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(input.shape[0], 1)
    diff = input[i] - input[j]
    if p == math.inf:
        return _max_full_to_ties(diff * jax.lax.stop_gradient(jnp.sign(diff)))
    return _vector_norm(diff, p, (1,), False)


@op(grad="DivBackward0", **_NN)
def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(norm_p(input, dim), eps)."""
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(input.dtype)}")
    d = _dim(dim, input.ndim)
    x = input.reshape(input.shape or (1,))
    n = _vector_norm(x, p, (d,), True)
    # clamp_min's gradient passes where norm >= eps
    return (x / jnp.where(n >= eps, n, jnp.asarray(eps, n.dtype))).reshape(input.shape)


@op(tensors=("tensor",), promote="none", differentiable=False, **_KERNEL)
def one_hot(tensor, num_classes=-1):
    """int64 one-hot vectors of num_classes entries (F.one_hot checks the values first)."""
    return (tensor[..., None] == jnp.arange(num_classes)).astype(jnp.int64)
