"""nn.functional fractional max pooling: PyTorch's argument handling (kernel and output sizes,
output_ratio, return_indices, the random samples drawn when none are given) around the rows
of _ops/fractional_pooling.py."""

from __future__ import annotations

from ... import _dispatch

__all__ = [
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]


def _sizes(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _pool(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    if input.dim() < n + 1:
        d = input.dim()
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], "
                         f"but got {-n - 1})")
    spatial = tuple(input.shape[-n:])
    if output_size is None:
        if isinstance(output_ratio, (tuple, list)) and len(output_ratio) > n:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = _sizes(output_ratio, n)
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    if _random_samples is None:
        from ... import rand
        batch = 1 if input.dim() == n + 1 else input.shape[0]
        _random_samples = rand(batch, input.shape[-n - 1], n, dtype=input.dtype,
                               device=input.device)
    out, indices = _dispatch.call_op(name, input, _random_samples,
                                     _sizes(kernel_size, n), _sizes(output_size, n))
    return (out, indices) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over the last two dims (windows at pseudo-random strides)."""
    return _pool(2, input, kernel_size, output_size, output_ratio, return_indices,
                 _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over the last three dims (windows at pseudo-random strides)."""
    return _pool(3, input, kernel_size, output_size, output_ratio, return_indices,
                 _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """fractional_max_pool2d's (output, indices)."""
    return _pool(2, input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """fractional_max_pool3d's (output, indices)."""
    return _pool(3, input, kernel_size, output_size, output_ratio, True, _random_samples)
