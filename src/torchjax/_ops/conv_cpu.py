"""How a convolution is lowered: lax.conv_general_dilated, and on XLA's CPU backend a faster form.

Measured on this 2-core CPU (jax 0.10.2) for the issue's 3x3 convolution of 64x32x26x26 by
64x32x3x3, float32, each piece one jitted call (docs/performance.md, "CPU convolutions"):

- the weight gradient is the slow part: XLA runs it as a convolution whose window is the whole
  24x24 output, ~4x the forward's time. Written as one matmul per kernel tap (the input's
  strided slice for that tap against the output gradient, summed over batch and positions) it
  takes about the forward's time; one matmul over the concatenated slices (im2col) is slower
  than the taps, since it first writes the 9x larger column matrix;
- a 2-d forward without padding is ~2.5x slower than the same convolution with one row of
  zero padding (XLA's CPU backend hands both to the same YNNPACK fusion; only the unpadded one
  is slow), so an unpadded 2-d convolution is run with one extra zero row on one side and the
  extra output row is sliced off: a few percent more arithmetic, less than half the time (1-d
  and 3-d forwards measured no faster padded, and keep theirs);
- the input gradient (XLA's transpose rule: a convolution of the padded output gradient with
  the flipped kernel) is already as fast as the forward, and stays.

The CPU form is a jax.custom_jvp: the primal is the (padded) lax convolution, the tangent is
linear in (input, weight) with the weight's part written tap by tap, so JAX's transpose of the
tangent gives the tap matmuls for the weight gradient, and forward mode and higher orders work
as for any JAX function. A transposed convolution gets the same weight-gradient form (its
weight gradient through lax measured 5-10x its forward). Which convolutions take the CPU form
is _cpu_form's rule (small ones, 1-d ones and a few others keep lax's). It is chosen with lax.platform_dependent when the program is lowered,
so a GPU or TPU program keeps lax.conv_general_dilated (whose GPU/TPU kernels have no such
problem), whatever the default backend was while tracing.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.custom_derivatives import SymbolicZero

_REAL_FLOATS = frozenset(np.dtype(d) for d in (jnp.float16, jnp.bfloat16, jnp.float32,
                                                 jnp.float64))
_HALF = frozenset(np.dtype(d) for d in (jnp.float16, jnp.bfloat16))


def dimension_numbers(dim: int):
    s = "DHW"[3 - dim:]
    return ("NC" + s, "OI" + s, "NC" + s)


def accumulator(x):
    # half precision accumulates in float32, as PyTorch's CPU kernels do
    return jnp.float32 if np.dtype(x.dtype) in _HALF else None


# -- lax.conv_general_dilated: every platform, and the CPU cases the faster form does not cover --

def lax_conv(x, w, stride, padding, dilation, groups):
    return lax.conv_general_dilated(
        x, w, stride, [(p, p) for p in padding], rhs_dilation=dilation,
        dimension_numbers=dimension_numbers(w.ndim - 2), feature_group_count=groups,
        preferred_element_type=accumulator(x))


def _regroup(w, groups):
    """PyTorch's transposed-convolution weight (in, out / groups, *k) as the weight of the
    convolution it transposes: (out, in / groups, *k)."""
    c_in, c_out_g = w.shape[:2]
    kernel = w.shape[2:]
    w = w.reshape((groups, c_in // groups, c_out_g) + kernel).swapaxes(1, 2)
    return w.reshape((groups * c_out_g, c_in // groups) + kernel)


def lax_conv_transposed(x, w, stride, padding, dilation, output_padding, groups):
    """The transpose of a convolution as a convolution of the stride-dilated input."""
    dim = w.ndim - 2
    kernel = w.shape[2:]
    w = jnp.flip(_regroup(w, groups), axis=tuple(range(2, 2 + dim)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + op)
            for k, p, d, op in zip(kernel, padding, dilation, output_padding)]
    return lax.conv_general_dilated(
        x, w, (1,) * dim, pads, lhs_dilation=stride, rhs_dilation=dilation,
        dimension_numbers=dimension_numbers(dim), feature_group_count=groups,
        preferred_element_type=accumulator(x))


# -- the CPU form ------------------------------------------------------------------------------

def _out_sizes(sizes, kernel, stride, pads, dilation):
    return [(n + lo + hi - d * (k - 1) - 1) // s + 1
            for n, k, s, (lo, hi), d in zip(sizes, kernel, stride, pads, dilation)]


def _padded_forward(x, w, stride, padding, dilation, groups):
    """lax's convolution, given at least one row of padding (see the module docstring): an
    unpadded one gets a zero row after the end of the spatial dim where that costs least, and
    the output row it adds, if any, is sliced off."""
    pads = [(p, p) for p in padding]
    out = None
    if len(padding) == 2 and not any(padding):
        sizes, kernel = x.shape[2:], w.shape[2:]
        out = _out_sizes(sizes, kernel, stride, pads, dilation)
        extra = []  # outputs added by padding each dim: a row of the other dims, or none
        for a in range(len(sizes)):
            p = list(pads)
            p[a] = (0, 1)
            grown = _out_sizes(sizes, kernel, stride, p, dilation)[a] > out[a]
            extra.append(int(np.prod(out)) // out[a] if grown else 0)
        pads[int(np.argmin(extra))] = (0, 1)
    y = lax.conv_general_dilated(
        x, w, stride, pads, rhs_dilation=dilation,
        dimension_numbers=dimension_numbers(w.ndim - 2), feature_group_count=groups)
    if out is not None and list(y.shape[2:]) != out:
        y = y[(slice(None), slice(None)) + tuple(slice(0, o) for o in out)]
    return y


def _tap_slices(x, kernel, stride, padding, dilation, out):
    """For each kernel tap (row-major), the strided slice of the zero-padded input it reads."""
    dim = len(kernel)
    xp = lax.pad(x, jnp.zeros((), x.dtype), [(0, 0, 0)] * (x.ndim - dim)
                 + [(p, max(0, (o - 1) * s + d * (k - 1) + 1 - n - p), 0)
                    for n, k, s, p, d, o in zip(x.shape[-dim:], kernel, stride, padding,
                                                dilation, out)])
    lead = x.ndim - dim
    for tap in np.ndindex(*kernel):
        start = [0] * lead + [t * d for t, d in zip(tap, dilation)]
        limit = list(xp.shape[:lead]) + [t * d + (o - 1) * s + 1
                                         for t, d, s, o in zip(tap, dilation, stride, out)]
        yield tap, lax.slice(xp, start, limit, [1] * lead + list(stride))


def _by_taps(x, w, stride, padding, dilation, groups, out):
    """The convolution as one matmul per kernel tap, written so that JAX's transpose of it in
    w (the weight gradient) is one matmul per tap too."""
    n, c = x.shape[:2]
    o = w.shape[0]
    xg = x.reshape((n, groups, c // groups) + x.shape[2:])
    wg = w.reshape((groups, o // groups, c // groups) + w.shape[2:])
    y = None
    for tap, xs in _tap_slices(xg, w.shape[2:], stride, padding, dilation, out):
        term = jnp.einsum("ngc...,goc->ngo...", xs, wg[(Ellipsis,) + tap])
        y = term if y is None else y + term
    return y.reshape((n, o) + tuple(out))


def cpu_conv(x, w, stride, padding, dilation, groups):
    """The convolution in the CPU form (module docstring); half precision in float32, as
    lax_conv accumulates it."""
    if np.dtype(x.dtype) in _HALF:
        x, w = x.astype(jnp.float32), w.astype(jnp.float32)
    out = _out_sizes(x.shape[2:], w.shape[2:], stride, [(p, p) for p in padding], dilation)
    forward = functools.partial(_padded_forward, stride=stride, padding=padding,
                                dilation=dilation, groups=groups)
    return _with_tap_jvp(forward, lambda x, dw: _by_taps(x, dw, stride, padding, dilation,
                                                          groups, out))(x, w)


def _with_tap_jvp(forward, weight_tangent):
    """forward(x, w) as a custom_jvp whose tangent is forward(dx, w) + weight_tangent(x, dw):
    plain JAX ops, linear in the tangents, which JAX transposes for reverse mode."""

    @jax.custom_jvp
    def conv(x, w):
        return forward(x, w)

    def conv_jvp(primals, tangents):
        x, w = primals
        dx, dw = tangents
        terms = []
        if not isinstance(dx, SymbolicZero):
            terms.append(forward(dx, w))
        if not isinstance(dw, SymbolicZero):
            terms.append(weight_tangent(x, dw))
        y = forward(x, w)
        return y, functools.reduce(jnp.add, terms) if terms else jnp.zeros_like(y)

    conv.defjvp(conv_jvp, symbolic_zeros=True)
    return conv


def _by_taps_transposed(x, w, stride, padding, dilation, groups, out):
    """The transposed convolution as one matmul per kernel tap, each result spread over the
    output positions its tap writes (position i * stride + tap * dilation - padding): JAX's
    transpose of it in w reads those positions back with a strided slice, one matmul a tap."""
    n, c = x.shape[:2]
    o_g = w.shape[1]
    sizes = x.shape[2:]
    xg = x.reshape((n, groups, c // groups) + sizes)
    wg = w.reshape((groups, c // groups, o_g) + w.shape[2:])
    zero = jnp.zeros((), x.dtype)
    y = None
    for tap in np.ndindex(*w.shape[2:]):
        z = jnp.einsum("ngc...,gco->ngo...", xg, wg[(Ellipsis,) + tap])
        lows = [t * d - p for t, d, p in zip(tap, dilation, padding)]
        term = lax.pad(z, zero, [(0, 0, 0)] * 3
                       + [(lo, size - lo - (n_in - 1) * s - 1, s - 1)
                          for lo, size, n_in, s in zip(lows, out, sizes, stride)])
        y = term if y is None else y + term
    return y.reshape((n, groups * o_g) + tuple(out))


def cpu_conv_transposed(x, w, stride, padding, dilation, output_padding, groups):
    """The transposed convolution in the CPU form: lax's primal, the weight's tangent tap by
    tap (module docstring); half precision in float32."""
    if np.dtype(x.dtype) in _HALF:
        x, w = x.astype(jnp.float32), w.astype(jnp.float32)
    out = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1
           for i, k, s, p, d, op in zip(x.shape[2:], w.shape[2:], stride, padding, dilation,
                                        output_padding)]
    forward = functools.partial(lax_conv_transposed, stride=stride, padding=padding,
                                dilation=dilation, output_padding=output_padding, groups=groups)
    return _with_tap_jvp(forward, lambda x, dw: _by_taps_transposed(
        x, dw, stride, padding, dilation, groups, out))(x, w)


# -- the choice -------------------------------------------------------------------------------

# Beyond this many kernel taps the CPU form's program (a matmul per tap) grows large enough
# for its compile time to matter; such kernels are rare and keep lax's lowering.
_MAX_TAPS = 64
# A convolution whose input and output both have fewer elements than this keeps lax's
# lowering: there the CPU form's dozen small ops cost more than they save (measured: 64x16x4x4
# by 32x16x3x3, padding 1, forward + backward 0.8 ms with lax, 3.3 ms in the CPU form;
# at 16x32x12x12 by 32x32x3x3, about 74k elements each side, the two are even; from
# 16x64x14x14 by 64x64x3x3 up the CPU form is faster). Transposed convolutions take the CPU
# form at every size: lax's weight gradient is slow for them even when small.
_MIN_ELEMENTS = 1 << 17


def _cpu_form(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """The CPU form for this convolution, or None where lax's lowering is kept: integer, bool
    and complex dtypes; non-transposed 1-d convolutions (XLA's 1-d kernels measured as fast as
    the CPU form, and padding slows them down); small non-transposed ones (_MIN_ELEMENTS);
    kernels of more than _MAX_TAPS taps; and a
    transposed convolution whose output_padding is not below its stride (its output is then
    not the exact transpose of the strided convolution the taps are read from)."""
    if np.dtype(x.dtype) not in _REAL_FLOATS or int(np.prod(w.shape[2:])) > _MAX_TAPS:
        return None
    if transposed:
        if any(op >= s for op, s in zip(output_padding, stride)):
            return None
        return functools.partial(cpu_conv_transposed, stride=stride, padding=padding,
                                 dilation=dilation, output_padding=output_padding,
                                 groups=groups)
    if w.ndim == 3:
        return None
    out = _out_sizes(x.shape[2:], w.shape[2:], stride, [(p, p) for p in padding], dilation)
    if max(x.size, x.shape[0] * w.shape[0] * int(np.prod(out))) < _MIN_ELEMENTS:
        return None
    return functools.partial(cpu_conv, stride=stride, padding=padding, dilation=dilation,
                             groups=groups)


def convolution(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """A (transposed) convolution of checked arguments: the CPU form when the program is
    lowered for XLA's CPU backend and the form applies, lax.conv_general_dilated otherwise.
    Half precision comes back in float32 either way."""
    if transposed:
        default = functools.partial(lax_conv_transposed, stride=stride, padding=padding,
                                    dilation=dilation, output_padding=output_padding,
                                    groups=groups)
    else:
        default = functools.partial(lax_conv, stride=stride, padding=padding,
                                    dilation=dilation, groups=groups)
    cpu = _cpu_form(x, w, stride, padding, dilation, transposed, output_padding, groups)
    if cpu is None:
        return default(x, w)
    return lax.platform_dependent(x, w, cpu=cpu, default=default)
