"""torch.stft / istft and their Tensor methods: the short-time Fourier transform and its
inverse, built from torchjax's own ops in the order PyTorch's do it (pad, frames, window,
FFT, transpose; inverse FFT, window, overlap-add, divide by the window envelope), so values,
dtypes and gradients follow those ops' and the results' grad_fn are PyTorch's.

The signal is padded by n_fft // 2 each side when `center` (with `pad_mode`), cut into frames
of n_fft every hop_length, each frame multiplied by the window (zero-padded to n_fft,
centred), transformed (a one-sided rfft for real signals and windows), and scaled by
n_fft ** -0.5 when `normalized`. Frames come out as the last dim: (batch?, freq, frames).
"""

from __future__ import annotations

import warnings

import jax

from . import _legacy_types
from ._tensor import Tensor

__all__ = ["stft", "istft"]

_WINDOW_WARNED = [False]
_REAL_WARNED = [False]


def _describe(x: Tensor) -> str:
    return f"{_legacy_types.type_name(x)}[{', '.join(map(str, x.shape))}]"


def _header(x, n_fft, hop, win, window, normalized, onesided, return_complex, align):
    """The call PyTorch's stft errors start with."""
    w = "None" if window is None else \
        f"{_legacy_types.type_name(window)}{{[{', '.join(map(str, window.shape))}]}}"

    def flag(v):
        return "None" if v is None else str(int(bool(v)))
    return (f"stft({_describe(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={w}, normalized={int(bool(normalized))}, onesided={flag(onesided)}, "
            f"return_complex={flag(return_complex)}, align_to_window={flag(align)}) : ")


def _centered(input, n_fft, pad_mode):
    """PyTorch's Python step: pad both ends by n_fft // 2 through a 3-d view."""
    from .nn import functional as F
    dim = input.dim()
    shape = [1] * (3 - dim) + list(input.shape)
    pad = n_fft // 2
    out = F.pad(input.view(shape), [pad, pad], pad_mode)
    return out.view(out.shape[-dim:])


def stft(input: Tensor, n_fft: int, hop_length=None, win_length=None, window=None,
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided=None, return_complex=None, align_to_window=None) -> Tensor:
    """Short-time Fourier transform: (batch?, n_fft // 2 + 1 or n_fft, frames), complex."""
    from . import fft, view_as_real
    from .nn import functional as F
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None and not complex_in:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if align_to_window is not None:
        if center:
            raise ValueError("stft align_to_window should only be set when center = false")
        if align_to_window:
            raise NotImplementedError("torch.stft(align_to_window=True) is not supported by "
                                      "torchjax")
    if center:
        input = _centered(input, n_fft, pad_mode)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(msg):
        return RuntimeError(_header(input, n_fft, hop, win, window, normalized, onesided,
                                    return_complex, align_to_window) + msg)

    if input.dim() not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(f"expected a 1D window tensor of size equal to win_length={win}, but got "
                   f"window with size [{', '.join(map(str, window.shape))}]")
    if window is None and not _WINDOW_WARNED[0]:
        _WINDOW_WARNED[0] = True  # PyTorch's TORCH_WARN_ONCE
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as torch.hann_window or "
            "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.", UserWarning, stacklevel=2)
    if window is None and win < n_fft:
        window = x.new_ones(win)  # a shorter rectangle, zero-padded like any window
    if window is not None and win < n_fft:
        left = (n_fft - win) // 2
        window = F.pad(window, [left, n_fft - win - left])
    onesided = not complex_in if onesided is None else onesided
    if onesided and complex_in:
        raise fail("Cannot have onesided output if window or input is complex")
    frames = x.unfold(-1, n_fft, hop)  # (batch, frames, n_fft)
    if window is not None:
        frames = frames * window
    norm = "ortho" if normalized else "backward"
    if complex_in or not onesided:
        out = fft.fft(frames, norm=norm)
    else:
        out = fft.rfft(frames, norm=norm)
    out = out.transpose_(1, 2)
    if input.dim() == 1:
        out = out.squeeze_(0)
    if return_complex is False:
        if not _REAL_WARNED[0]:
            _REAL_WARNED[0] = True
            warnings.warn(
                "stft with return_complex=False is deprecated. In a future pytorch release, "
                "stft will return complex tensors for all inputs, and return_complex=False will "
                "raise an error.\nNote: you can still call torch.view_as_real on the complex "
                "output to recover the old return format.", UserWarning, stacklevel=2)
        return view_as_real(out)
    return out


_ISTFT_WINDOW_WARNED = [False]
_ISTFT_PAD_WARNED = [False]
_CPP_TYPES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _istft_header(x, n_fft, hop, win, window, center, normalized, onesided, length,
                  return_complex):
    w = "None" if window is None else \
        f"{_legacy_types.type_name(window)}{{[{', '.join(map(str, window.shape))}]}}"
    t = f"CPU{_CPP_TYPES.get(x.dtype.name, x.dtype.name)}Type[{', '.join(map(str, x.shape))}]"
    one = "None" if onesided is None else str(int(bool(onesided)))
    return (f"istft({t}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={w}, "
            f"center={int(bool(center))}, normalized={int(bool(normalized))}, onesided={one}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(bool(return_complex))}) ")


def _overlap_add(frames, hop, length):
    """Sum of frames (batch, n_frames, n_fft) placed every hop along a signal of `length`
    (the backward of unfold, as PyTorch's istft uses)."""
    from .nn import functional as F
    n_fft = frames.shape[-1]
    cols = frames.transpose(1, 2)  # (batch, n_fft, n_frames): fold's columns
    out = F.fold(cols, output_size=(1, length), kernel_size=(1, n_fft), stride=(1, hop))
    return out.reshape(frames.shape[0], length)


def istft(input: Tensor, n_fft: int, hop_length=None, win_length=None, window=None,
          center: bool = True, normalized: bool = False, onesided=None, length=None,
          return_complex: bool = False) -> Tensor:
    """Inverse short-time Fourier transform of a complex (batch?, freq, frames) tensor."""
    from . import fft, view_as_real
    from .nn import functional as F
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")

    def fail(msg):
        return RuntimeError(_istft_header(input, n_fft, hop, win, window, center, normalized,
                                          onesided, length, return_complex) + msg)

    if input.numel() == 0:
        raise fail(": istft input tensor cannot be empty")
    real_dim = input.dim() + 1  # PyTorch counts the dims of view_as_real(input)
    if real_dim not in (3, 4):
        raise fail(f": expected a tensor with 3 or 4 dimensions of complex dtype, but got "
                   f"{real_dim}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    full = n_fft + hop * (n_frames - 1)
    one = fft_size != n_fft if onesided is None else bool(onesided)
    if one and n_fft // 2 + 1 != fft_size:
        raise fail(f": expected the frequency dimension (3rd to the last) of the input tensor "
                   f"to match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        raise fail(f": expected the frequency dimension (3rd to the last) of the input tensor "
                   f"to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail(": expected 0 < win_length <= n_fft")
    if window is not None:
        if window.dim() != 1:
            raise fail(": expected a 1D window")
        if window.shape[0] != win:
            raise fail(f": expected a window with size equal to win_length={win}, but got "
                       f"window with size {window.shape[0]}")
    elif not _ISTFT_WINDOW_WARNED[0]:
        _ISTFT_WINDOW_WARNED[0] = True
        warnings.warn(
            "A window was not provided. A rectangular window will be applied.Please provide the "
            "same window used by stft to make the inversion lossless.To suppress this warning "
            "and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
            "device=<device>)`.", UserWarning, stacklevel=2)
    real_dtype = view_as_real(input.resolve_conj()).dtype
    w = window if window is not None else input.new_ones(win, dtype=real_dtype)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = F.pad(w, [left, n_fft - win - left])
    x = input.unsqueeze(0) if real_dim == 3 else input
    x = x.transpose(1, 2)  # (batch, frames, freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if one:
            raise fail(": Cannot have onesided output if window or input is complex")
        frames = fft.ifft(x, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise fail(": Complex windows are incompatible with return_complex=False")
        if not one:
            x = x[..., : n_fft // 2 + 1]
        frames = fft.irfft(x, n=n_fft, norm=norm)
    y = _overlap_add(frames * w.view(1, 1, n_fft), hop, full)
    env = _overlap_add((w * w).expand(1, n_frames, n_fft), hop, full)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else full)
    y, env = y[:, start:end], env[:, start:end]
    if not isinstance(env._data, jax.core.Tracer):
        low = bool(env.abs().min() < 1e-11)  # PyTorch's check reads the values too
        if low:
            raise fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / env
    if real_dim == 3:
        y = y.squeeze(0)
    if end > full:
        if not _ISTFT_PAD_WARNED[0]:
            _ISTFT_PAD_WARNED[0] = True
            warnings.warn(
                "The length of signal is shorter than the length parameter. Result is being "
                "padded with zeros in the tail. Please check your center and hop_length "
                "settings.", UserWarning, stacklevel=2)
        y = F.pad(y, [0, end - full])
    return y


Tensor.stft = stft
Tensor.istft = istft
