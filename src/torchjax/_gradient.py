"""torch.gradient: the derivative of sampled values along dims by finite differences, one
tensor per dim, built from torchjax's slicing, arithmetic and cat as PyTorch builds it (so
the result's gradient flows, and its grad_fn is PyTorch's CatBackward0).

Interior points use central differences, second-order accurate also for uneven sample
coordinates; the two end points use one-sided differences of first (edge_order=1) or second
(edge_order=2) order. `spacing` is the sample distance (a number, one per dim) or the sample
coordinates (a 1-d tensor per dim).
"""

from __future__ import annotations

import numbers

from . import _dtypes
from ._tensor import Tensor

__all__ = ["gradient"]


def _side(x, d, start, stop):
    return x.narrow(d, start, stop - start)


def _uniform(x, d, h, edge_order):
    """The derivative along d for samples h apart."""
    n = x.shape[d]
    center = (_side(x, d, 2, n) - _side(x, d, 0, n - 2)) / h
    if edge_order == 1:
        first = (_side(x, d, 1, 2) - _side(x, d, 0, 1)) / h
        last = (_side(x, d, n - 1, n) - _side(x, d, n - 2, n - 1)) / h
    else:
        first = (-1.5 * _side(x, d, 0, 1) + 2 * _side(x, d, 1, 2) - 0.5 * _side(x, d, 2, 3)) / h
        last = (0.5 * _side(x, d, n - 3, n - 2) - 2 * _side(x, d, n - 2, n - 1)
                + 1.5 * _side(x, d, n - 1, n)) / h
    from . import cat
    return cat([first, center / 2, last], d)


def _coordinates(x, d, coords, edge_order):
    """The derivative along d for samples at the given coordinates."""
    from . import cat
    n = x.shape[d]
    step = coords.diff()
    h1, h2 = step[:-1], step[1:]
    shape = [1] * x.dim()
    shape[d] = -1
    # weights of the left, middle and right samples: exact for quadratics
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _side(x, d, 0, n - 2) + b * _side(x, d, 1, n - 1) + c * _side(x, d, 2, n)
    s0, s1, sl, sm = step[0], step[1] if n > 2 else step[0], step[-1], step[-2] if n > 2 \
        else step[-1]
    if edge_order == 1:
        first = (_side(x, d, 1, 2) - _side(x, d, 0, 1)) / s0
        last = (_side(x, d, n - 1, n) - _side(x, d, n - 2, n - 1)) / sl
    else:
        first = (-(2.0 * s0 + s1) / (s0 * (s0 + s1)) * _side(x, d, 0, 1)
                 + (s0 + s1) / (s0 * s1) * _side(x, d, 1, 2)
                 + (-s0) / (s1 * (s0 + s1)) * _side(x, d, 2, 3))
        last = (sl / (sm * (sl + sm)) * _side(x, d, n - 3, n - 2)
                - (sl + sm) / (sl * sm) * _side(x, d, n - 2, n - 1)
                + (2 * sl + sm) / (sl * (sl + sm)) * _side(x, d, n - 1, n))
    return cat([first, center, last], d)


def _dims(input, dim):
    if dim is None:
        return list(range(input.dim())), False
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    n = input.dim()
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        d = d % n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out, True


def _spacings(input, spacing, dims, dim_given):
    """One spacing per dim: a number or a 1-d coordinates tensor."""
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, numbers.Number) or (isinstance(spacing, Tensor)
                                               and spacing.dim() == 0):
        return [spacing.item() if isinstance(spacing, Tensor) else spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError(
                f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                f"and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}.")
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got "
            f"a list of length {len(spacing)}")
    for s in spacing:
        if isinstance(s, Tensor) and s.dim() != 1:
            raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                               f"dimension, but got an element with {s.dim()} dimensions!")
    return spacing


def gradient(input: Tensor, *, spacing=None, dim=None, edge_order: int = 1) -> tuple:
    """The derivative of input along each dim in `dim` (all by default), as a tuple."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, dim_given = _dims(input, dim)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    spacings = _spacings(input, spacing, dims, dim_given)
    if not (input.is_floating_point() or input.is_complex()):
        input = input.to(_dtypes.get_default_dtype())  # differences of integers are floats
    out = []
    for d, s in zip(dims, spacings):
        if isinstance(s, Tensor):
            out.append(_coordinates(input, d, s, edge_order))
        else:
            out.append(_uniform(input, d, s, edge_order))
    return tuple(out)
