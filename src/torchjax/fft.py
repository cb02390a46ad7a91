"""torchjax.fft: PyTorch's torch.fft, published from the op table's torch.fft rows
(named like PyTorch's native functions, "fft_<name>") and the plain functions below."""

from ._generate import namespace_functions as _namespace_functions

globals().update(_namespace_functions("torch.fft"))


def _freq(name, n, d, dtype, device, requires_grad, half):
    import numpy as np

    from . import _creation, _dtypes
    from ._tensor import Tensor

    if isinstance(d, Tensor):
        d = d.item()
    dt = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    if dt.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for '
                                  f"'{_dtypes.SCALAR_NAMES[dt.name]}'")
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    # PyTorch multiplies an arange of the result dtype by 1 / (n * d) rounded to that dtype
    k = np.arange(n // 2 + 1) if half else np.concatenate(
        [np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    with np.errstate(divide="ignore", invalid="ignore"):  # rfftfreq(0) is [nan]: 0 * inf
        scale = np.float64(1.0) / np.float64(n * d)
        arr = k.astype(dt.np) * np.asarray(scale).astype(dt.np)
    return _creation._finish(arr, device, requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an FFT of length n with sample spacing d."""
    return _freq("fftfreq", n, d, dtype, device, requires_grad, False)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of an rfft of length n with sample spacing d."""
    return _freq("rfftfreq", n, d, dtype, device, requires_grad, True)
