"""Op-table rows: fractional max pooling (PyTorch's fractional_max_pool2d / 3d kernels), the
max over windows placed at pseudo-random fractional strides (Graham, "Fractional
Max-Pooling", 2014).

Each plane (sample, channel) gets one number u in [0, 1) per pooled dim: with
alpha = (input - pool) / (output - 1), window i starts at floor((i + u) alpha) - floor(u alpha)
and the last at input - pool, computed in the input's dtype as PyTorch's kernel does, so
the windows are PyTorch's for the same u. As in PyTorch, u[0] places the windows along the
width of a 2-d pooling, and along time, height, width (u[0], u[1], u[2]) for 3-d; a window's
maximum is its first largest element, or its last NaN. The gradient goes to the chosen
elements (summed where windows overlap), as PyTorch's backward does.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import op

# named as PyTorch's ops, which autocast's op lists name (float32 on CPU); published only
# through nn.functional's composites
_NN = dict(tensors=("input", "random_samples"), promote="none", function=False, method=False,
           out_names=("output", "indices"))
_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _starts(u, size, out, pool):
    """The window starts along one dim, shaped u.shape + (out,)."""
    last = jnp.full(u.shape + (1,), size - pool, jnp.int64)
    if out == 1:
        return last
    alpha = jnp.asarray(size - pool, u.dtype) / jnp.asarray(out - 1, u.dtype)
    i = jnp.arange(out - 1, dtype=u.dtype)
    first = jnp.floor((i + u[..., None]) * alpha).astype(jnp.int64)
    return jnp.concatenate([first - jnp.floor(u * alpha).astype(jnp.int64)[..., None], last], -1)


def _check(input, random_samples, kernel_size, output_size, name):
    n = len(kernel_size)
    if not jnp.issubdtype(input.dtype, jnp.floating):
        from .special import _not_implemented_for
        raise _not_implemented_for(f"{name}_out_frame", input.dtype)
    if random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if random_samples.shape[1] != input.shape[-n - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if random_samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{random_samples.shape[2]}.")
    where = f"{name}()" if n == 2 else f"{name}_out()"
    # PyTorch's 3-d kernel also refuses windows that would end exactly at the input's end
    room = 0 if n == 2 else 1
    for axis, size, out, pool in zip(_AXES[n], input.shape[-n:], output_size, kernel_size):
        if out + pool - 1 + room > size:
            raise RuntimeError(f"{where}: pool {axis} {pool} too large relative to input "
                               f"{axis} {size}")


def _pool(input, random_samples, kernel_size, output_size):
    """(output, indices) of a batched input (N, C, *spatial)."""
    n = len(kernel_size)
    spatial = input.shape[-n:]
    u = random_samples[: input.shape[0]]
    # u's order along the pooled dims: width first for 2-d, time first for 3-d
    u_for = [u[..., 1], u[..., 0]] if n == 2 else [u[..., 0], u[..., 1], u[..., 2]]
    flat = jnp.zeros((), jnp.int64)
    stride = 1
    for d in reversed(range(n)):  # the flat position of each window element, (N, C, *out, *k)
        pos = _starts(u_for[d], spatial[d], output_size[d], kernel_size[d])
        pos = pos[..., None] + jnp.arange(kernel_size[d])
        shape = [input.shape[0], input.shape[1]] + [1] * (2 * n)
        shape[2 + d], shape[2 + n + d] = output_size[d], kernel_size[d]
        flat = flat + pos.reshape(shape) * stride
        stride *= spatial[d]
    flat = flat.reshape(input.shape[:2] + tuple(output_size) + (-1,))
    values = jnp.take_along_axis(input.reshape(input.shape[:2] + (-1,)),
                                 flat.reshape(input.shape[:2] + (-1,)), axis=-1)
    values = values.reshape(flat.shape)
    nan = jnp.isnan(values)
    k = values.shape[-1]
    last_nan = k - 1 - jnp.argmax(nan[..., ::-1], axis=-1)
    first_max = jnp.argmax(jnp.where(nan, -jnp.inf, values), axis=-1)
    pick = jnp.where(nan.any(-1), last_nan, first_max)[..., None]
    out = jnp.take_along_axis(values, pick, axis=-1)[..., 0]
    return out, jnp.take_along_axis(flat, pick, axis=-1)[..., 0]


def _row(n):
    name = f"fractional_max_pool{n}d"

    def fn(input, random_samples, kernel_size, output_size):
        _check(input, random_samples, kernel_size, output_size, name)
        if input.ndim == n + 1:  # one unbatched sample
            out, idx = _pool(input[None], random_samples, kernel_size, output_size)
            return out[0], idx[0]
        return _pool(input, random_samples, kernel_size, output_size)

    fn.__name__ = name
    fn.__doc__ = f"Fractional max pooling over {n} dims at the given random samples."
    op(name=name, grad=f"FractionalMaxPool{n}DBackward0", **_NN)(fn)


_row(2)
_row(3)
