"""Op-table rows: torch.fft rows."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import op

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}
# The transforms are linear: PyTorch's backward of a complex-input transform reads only sizes
# and saves no tensor, while that of a real-input one (FftR2CBackward0) saves its input
_FFT = dict(function=False, method=False, namespace="torch.fft", promote="float", saves=())
_R2C = dict(_FFT, saves=("input",))
_IN = ("input",)


def _r2c_saves(input, **_):
    return () if input.is_complex() else _IN


def _norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm]


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


def _check_dtype(x, real_only=None):
    # PyTorch's CPU FFT has no half-precision kernels
    if x.dtype in (jnp.float16, jnp.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_type_name(x.dtype)}")
    if real_only and jnp.iscomplexobj(x):
        kind = "real-valued" if real_only == "rfftn" else "real"
        raise RuntimeError(f"{real_only} expects a {kind} input tensor, but got "
                           f"{_type_name(x.dtype)}")


def _as_complex(x):
    return x if jnp.iscomplexobj(x) else x.astype(jnp.result_type(x.dtype, jnp.complex64))


def _wrap_dim(d, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {d})")
    return d % ndim


def _check_n(n):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _dims_and_sizes(x, s, dim, name, last_half=False):
    """PyTorch's rules for (s, dim) of the n-dimensional transforms: the dims to transform
    and the size of each (None where the input's size is kept)."""
    if dim is not None:
        if isinstance(dim, int):
            dim = (dim,)
        dims = tuple(_wrap_dim(d, x.ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        dims = tuple(range(x.ndim - len(s), x.ndim))
    else:
        dims = tuple(range(x.ndim))
    if s is None:
        sizes = [None] * len(dims)
    else:
        sizes = [None if v == -1 else int(v) for v in s]
    for d, v in zip(dims, sizes):
        _check_n(x.shape[d] if v is None else v)
    if name and not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if last_half and dims and sizes[-1] is None:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        _check_n(sizes[-1])
    return dims, sizes


def _resize(x, dims, sizes):
    """Crop or zero-pad x along dims to sizes (None keeps the size)."""
    for d, n in zip(dims, sizes):
        if n is None or n == x.shape[d]:
            continue
        if n < x.shape[d]:
            x = jax.lax.slice_in_dim(x, 0, n, axis=d)
        else:
            pad = [(0, 0)] * x.ndim
            pad[d] = (0, n - x.shape[d])
            x = jnp.pad(x, pad)
    return x


def _c2c(x, dims, sizes, norm, inverse):
    x = _resize(_as_complex(x), dims, sizes)
    if not dims:
        return x
    f = jnp.fft.ifftn if inverse else jnp.fft.fftn
    return f(x, axes=dims, norm=_norm(norm))


def _r2c(x, dims, sizes, norm):
    x = _resize(x, dims, sizes)
    return jnp.fft.rfftn(x, axes=dims, norm=_norm(norm))


def _c2r(x, dims, sizes, norm):
    # the last dim's output size; the others are cropped or padded on the input first
    x = _resize(_as_complex(x), dims[:-1], sizes[:-1])
    return jnp.fft.irfftn(x, s=[x.shape[d] for d in dims[:-1]] + [sizes[-1]], axes=dims,
                          norm=_norm(norm))


def _one(x, n, dim):
    d = _wrap_dim(dim, x.ndim)
    _check_n(x.shape[d] if n is None else n)
    return (d,), [n]


# -- one-dimensional ---------------------------------------------------------------------------

# a real input takes PyTorch's real-to-complex kernel (with both halves filled in)
@op(grad=lambda input, **_: "FftC2CBackward0" if input.is_complex() else "FftR2CBackward0",
    **dict(_FFT, saves=_r2c_saves))
def fft_fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform of input."""
    _check_dtype(input)
    dims, sizes = _one(input, n, dim)
    return _c2c(input, dims, sizes, norm, False)


@op(grad="FftC2CBackward0", **dict(_FFT, saves=_r2c_saves))
def fft_ifft(input, n=None, dim=-1, norm=None):
    """The one-dimensional inverse discrete Fourier transform of input."""
    _check_dtype(input)
    dims, sizes = _one(input, n, dim)
    return _c2c(input, dims, sizes, norm, True)


@op(grad="FftR2CBackward0", **_R2C)
def fft_rfft(input, n=None, dim=-1, norm=None):
    """The one-dimensional Fourier transform of real input: the non-negative frequencies."""
    _check_dtype(input, "rfft")
    dims, sizes = _one(input, n, dim)
    return _r2c(input, dims, sizes, norm)


@op(grad="FftC2RBackward0", **_FFT)
def fft_irfft(input, n=None, dim=-1, norm=None):
    """The inverse of rfft: a real signal of length n (default 2 * (size - 1))."""
    _check_dtype(input)
    d = _wrap_dim(dim, input.ndim)
    _check_n(n)
    n = 2 * (input.shape[d] - 1) if n is None else n
    _check_n(n)
    return _c2r(input, (d,), [n], norm)


@op(grad="FftC2RBackward0", **_FFT)
def fft_hfft(input, n=None, dim=-1, norm=None):
    """The Fourier transform of a Hermitian-symmetric signal given by its first half."""
    _check_dtype(input)
    d = _wrap_dim(dim, input.ndim)
    _check_n(n)
    n = 2 * (input.shape[d] - 1) if n is None else n
    _check_n(n)
    # hfft is irfft of the conjugate with the forward and backward scalings swapped
    inv = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
    _norm(norm)
    return _c2r(jnp.conj(_as_complex(input)), (d,), [n], inv[norm])


@op(grad="ConjBackward0", **_R2C)
def fft_ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of hfft: the first half of the Hermitian spectrum of real input."""
    _check_dtype(input, "ihfft")
    dims, sizes = _one(input, n, dim)
    inv = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
    _norm(norm)
    return jnp.conj(_r2c(input, dims, sizes, inv[norm]))


# -- two- and n-dimensional --------------------------------------------------------------------

@op(grad="FftC2CBackward0", **_FFT)
def fft_fft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional discrete Fourier transform of input."""
    _check_dtype(input)
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _c2c(input, dims, sizes, norm, False)


@op(grad="FftC2CBackward0", **_FFT)
def fft_ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional inverse discrete Fourier transform of input."""
    _check_dtype(input)
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _c2c(input, dims, sizes, norm, True)


@op(grad="FftC2CBackward0", **_FFT)
def fft_fftn(input, s=None, dim=None, norm=None):
    """The n-dimensional discrete Fourier transform of input (all dims by default)."""
    _check_dtype(input)
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _c2c(input, dims, sizes, norm, False)


@op(grad="FftC2CBackward0", **_FFT)
def fft_ifftn(input, s=None, dim=None, norm=None):
    """The n-dimensional inverse discrete Fourier transform of input (all dims by default)."""
    _check_dtype(input)
    dims, sizes = _dims_and_sizes(input, s, dim, None)
    return _c2c(input, dims, sizes, norm, True)


@op(grad="FftR2CBackward0", **_R2C)
def fft_rfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional Fourier transform of real input; the last dim is halved."""
    _check_dtype(input, "rfftn")
    dims, sizes = _dims_and_sizes(input, s, dim, "rfftn")
    return _r2c(input, dims, sizes, norm)


@op(grad="FftR2CBackward0", **_R2C)
def fft_rfftn(input, s=None, dim=None, norm=None):
    """The n-dimensional Fourier transform of real input; the last dim is halved."""
    _check_dtype(input, "rfftn")
    dims, sizes = _dims_and_sizes(input, s, dim, "rfftn")
    return _r2c(input, dims, sizes, norm)


@op(grad="FftC2RBackward0", **_FFT)
def fft_irfft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of rfft2: a real signal of shape s."""
    _check_dtype(input)
    dims, sizes = _dims_and_sizes(input, s, dim, "irfftn", last_half=True)
    return _c2r(input, dims, sizes, norm)


@op(grad="FftC2RBackward0", **_FFT)
def fft_irfftn(input, s=None, dim=None, norm=None):
    """The inverse of rfftn: a real signal of shape s."""
    _check_dtype(input)
    dims, sizes = _dims_and_sizes(input, s, dim, "irfftn", last_half=True)
    return _c2r(input, dims, sizes, norm)


# -- Hermitian, two- and n-dimensional ---------------------------------------------------------

# the hfft family is the irfft/rfft family with the conjugate and the forward and backward
# scalings swapped: hfftn(x) = n * irfftn(conj(x)), ihfftn(x) = conj(rfftn(x)) / n
_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _hfftn(input, s, dim, norm):
    _check_dtype(input)
    _norm(norm)
    dims, sizes = _dims_and_sizes(input, s, dim, "hfftn", last_half=True)
    return _c2r(jnp.conj(_as_complex(input)), dims, sizes, _SWAPPED[norm])


def _ihfftn(input, s, dim, norm):
    _check_dtype(input, "ihfftn")
    _norm(norm)
    dims, sizes = _dims_and_sizes(input, s, dim, "ihfftn")
    return jnp.conj(_r2c(input, dims, sizes, _SWAPPED[norm]))


def _ihfftn_grad(input, s=None, dim=None, **_):
    # PyTorch's last step is the inverse c2c over the leading dims; with one dim, the conj
    n = len(dim) if isinstance(dim, (tuple, list)) else 1 if dim is not None else \
        len(s) if s is not None else input.dim()
    return "FftC2CBackward0" if n > 1 else "ConjBackward0"


@op(grad="FftC2RBackward0", **_FFT)
def fft_hfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional FFT of a Hermitian-symmetric signal given by its half: real."""
    return _hfftn(input, s, dim, norm)


@op(grad="FftC2RBackward0", **_FFT)
def fft_hfftn(input, s=None, dim=None, norm=None):
    """The n-dimensional FFT of a Hermitian-symmetric signal given by its half: real."""
    return _hfftn(input, s, dim, norm)


@op(grad=_ihfftn_grad, **_R2C)
def fft_ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of hfft2: half of the Hermitian spectrum of real input."""
    return _ihfftn(input, s, dim, norm)


@op(grad=_ihfftn_grad, **_R2C)
def fft_ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of hfftn: half of the Hermitian spectrum of real input."""
    return _ihfftn(input, s, dim, norm)


# -- shifts ------------------------------------------------------------------------------------

def _shift_dims(x, dim):
    if dim is None:
        if x.ndim == 0:
            raise RuntimeError("`shifts` required")
        return tuple(range(x.ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(_wrap_dim(d, x.ndim) for d in dim)


@op(grad="RollBackward0", needs=(), promote="none", function=False, method=False,
    namespace="torch.fft")
def fft_fftshift(input, dim=None):
    """Move the zero-frequency term to the centre of the dims (all by default)."""
    dims = _shift_dims(input, dim)
    return jnp.roll(input, [input.shape[d] // 2 for d in dims], axis=dims)


@op(grad="RollBackward0", needs=(), promote="none", function=False, method=False,
    namespace="torch.fft")
def fft_ifftshift(input, dim=None):
    """The inverse of fftshift."""
    dims = _shift_dims(input, dim)
    return jnp.roll(input, [-(input.shape[d] // 2) for d in dims], axis=dims)
