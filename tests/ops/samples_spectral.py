"""Samples for the rows in _ops/spectral.py.

Complex inputs never require grad in the harness, so gradients are compared on real inputs:
directly (real cotangents on the complex output) and through real-valued chains such as
`fft(x).abs()` or `irfft(complex(a, b))`, where the conjugation conventions of PyTorch and
JAX cannot differ.
"""

import numpy as np

from .harness import S, make, own_rng


def C(*shape, dtype="complex64"):
    """A deterministic random complex array."""
    return (make(*shape, dtype="float64") + 1j * make(*shape, dtype="float64")).astype(dtype)


def _abs_of(name):
    return lambda lib, x, **k: getattr(lib.fft, name)(x, **k).abs()


def _of_complex(name):
    """name applied to complex(a, b): gradients reach both real parts."""
    return lambda lib, a, b, **k: getattr(lib.fft, name)(lib.complex(a, b), **k)


def _resolved(name, samples):
    """PyTorch computes ifft/ihfft of real input as a lazy conjugate, which the harness cannot
    read with numpy(): resolve it (a no-op in torchjax) in the calls."""
    f = (lambda lib, *a, **k: getattr(lib.fft, name)(*a, **k).resolve_conj())
    for s in samples:
        if s.call is None:
            s.call = f
    return samples


def _one_dim(name, real_only=False):
    s = [
        S(make(8)),
        S(make(3, 5), dim=0, desc="dim 0"),
        S(make(2, 3, 4), n=6, dim=-2, desc="zero-padded, negative dim"),
        S(make(2, 7), n=4, norm="ortho", desc="cropped"),
        S(make(4, 6), norm="forward"),
        S(make(4, 6), norm="backward", n=5, dim=1),
        S(make(1, 5), call=_abs_of(name), desc="abs chain"),
        S(make(6, dtype="int64", low=-5, high=5), desc="int64 -> complex64"),
        S(make(2, 4, dtype="int32", low=-5, high=5), dim=0, desc="int32"),
        S(make(5) > 0, desc="bool"),
        S(make(3, 4, dtype="float64"), n=3, desc="float64"),
    ]
    if not real_only:
        s += [
            S(C(3, 4), desc="complex64"),
            S(C(2, 5, dtype="complex128"), n=7, dim=0, norm="ortho", desc="complex128"),
            S(make(2, 3), make(2, 3), call=_of_complex(name), n=4, desc="complex(a, b)"),
        ]
    return s


def _c2r(name):
    return [
        S(C(6), desc="complex64"),
        S(C(3, 4, dtype="complex128"), n=5, dim=0, desc="complex128, odd n"),
        S(C(2, 5), n=4, dim=-1, norm="ortho", desc="cropped"),
        S(C(2, 3, 2), n=9, dim=-2, norm="forward", desc="padded"),
        S(make(2, 5), desc="real input"),
        S(make(5, dtype="int64", low=-3, high=3), desc="int64"),
        S(make(3, 4), make(3, 4), call=_of_complex(name), desc="complex(a, b)"),
        S(make(2, 3), make(2, 3), call=_of_complex(name), n=3, norm="ortho", desc="odd"),
        S(make(4), make(4), call=_of_complex(name), n=8, norm="forward", desc="padded"),
        S(make(1, 4, 2), make(1, 4, 2), call=_of_complex(name), dim=1, norm="backward"),
    ]


def _nd(name, default_dims):
    two = default_dims == (-2, -1)
    return [
        S(make(4, 5)),
        S(make(2, 3, 4), desc="batched"),
        S(make(3, 4, 5), s=(2, 6), dim=(0, 2), desc="s and dim"),
        S(make(3, 4, 5), s=[5, -1], desc="s with -1"),
        S(make(3, 4, 5), dim=(-1, 0), norm="ortho", desc="negative dims, reversed"),
        S(make(4, 6), norm="forward"),
        S(make(4, 6), norm="backward", s=(3, 3)),
        S(make(2, 5), call=_abs_of(name), desc="abs chain"),
        S(make(3, 4, dtype="int64", low=-4, high=4), desc="int64"),
        S(make(3, 3) > 0, desc="bool"),
        S(C(3, 4), desc="complex64"),
        S(C(2, 3, 4, dtype="complex128"), s=(3, 2), norm="ortho", desc="complex128"),
        S(make(2, 3), make(2, 3), call=_of_complex(name), desc="complex(a, b)"),
    ] + ([] if two else [
        S(make(6), desc="1-d"),
        S(make(2, 3, 4), dim=1, desc="one int dim"),
        S(make(2, 3, 4), s=(5,), desc="s only"),
        S(np.array(1.5, dtype="float32"), desc="0-d: no dims"),
        S(make(3, 2), dim=(), desc="no dims"),
    ])


def _rnd(name, default_dims):
    two = default_dims == (-2, -1)
    return [
        S(make(4, 6)),
        S(make(2, 3, 4), desc="batched"),
        S(make(3, 4, 5), s=(2, 6), dim=(0, 2), desc="s and dim"),
        S(make(3, 4, 5), dim=(-1, 0), norm="ortho", desc="negative dims, reversed"),
        S(make(4, 7), norm="forward"),
        S(make(4, 6), norm="backward", s=(3, 5)),
        S(make(2, 5), call=_abs_of(name), desc="abs chain"),
        S(make(3, 4, dtype="int64", low=-4, high=4), desc="int64"),
        S(make(3, 4, dtype="float64"), desc="float64"),
    ] + ([] if two else [
        S(make(6), desc="1-d"),
        S(make(2, 3, 4), dim=1, desc="one int dim"),
        S(make(2, 3, 4), s=(5,), desc="s only"),
    ])


def _irnd(name, default_dims):
    two = default_dims == (-2, -1)
    return [
        S(C(4, 5)),
        S(C(2, 3, 4, dtype="complex128"), desc="batched complex128"),
        S(C(3, 4, 5), s=(2, 6), dim=(0, 2), desc="s and dim"),
        S(C(3, 4, 5), s=(4, -1), desc="s with -1"),
        S(C(3, 4, 5), dim=(-1, 0), norm="ortho", desc="negative dims, reversed"),
        S(C(4, 3), norm="forward", s=(5, 5), desc="odd last size"),
        S(make(4, 3), desc="real input"),
        S(make(3, 3, dtype="int64", low=-4, high=4), desc="int64"),
        S(make(3, 4), make(3, 4), call=_of_complex(name), desc="complex(a, b)"),
        S(make(2, 3, 3), make(2, 3, 3), call=_of_complex(name), s=(4, 5), norm="ortho"),
        S(make(3, 2), make(3, 2), call=_of_complex(name), s=(2, 2), norm="forward"),
    ] + ([] if two else [
        S(C(6), desc="1-d"),
        S(C(2, 3, 4), dim=1, desc="one int dim"),
        S(make(2, 4), make(2, 4), call=_of_complex(name), dim=[0], desc="dim list"),
    ])


def _shift():
    return [
        S(make(5)),
        S(make(4, 5), desc="all dims"),
        S(make(3, 4, 5), dim=1),
        S(make(3, 4, 5), dim=(0, -1), desc="tuple of dims, negative"),
        S(make(3, 4), dim=[-2], desc="list"),
        S(make(4, 3, dtype="int64", low=0, high=9), desc="int64 keeps its dtype"),
        S(make(3, 3) > 0, dim=0, desc="bool"),
        S(make(6).astype("float16"), desc="float16"),
        S(C(2, 3), desc="complex"),
        S(make(0, 3), desc="empty"),
    ]


# PyTorch builds these from other ops for some inputs, and the last of those names the node
GRAD_NAME_SKIP = {"fft_ifft": "a real input ends in CloneBackward0",
                  "fft_ihfft": "ends in CloneBackward0",
                  # (without resolve_conj: tests/test_torch_small_functions.py)
                  "fft_ihfftn": "one transformed dim ends in CloneBackward0 (resolve_conj)"}

SAMPLES: dict = {
    "fft_fft": _one_dim("fft"),
    "fft_ifft": _resolved("ifft", _one_dim("ifft")),
    "fft_rfft": _one_dim("rfft", real_only=True),
    "fft_ihfft": _resolved("ihfft", _one_dim("ihfft", real_only=True)),
    "fft_irfft": _c2r("irfft"),
    "fft_hfft": _c2r("hfft"),
    "fft_fft2": _nd("fft2", (-2, -1)),
    "fft_ifft2": _nd("ifft2", (-2, -1)),
    "fft_fftn": _nd("fftn", None),
    "fft_ifftn": _nd("ifftn", None),
    "fft_rfft2": _rnd("rfft2", (-2, -1)),
    "fft_rfftn": _rnd("rfftn", None),
    "fft_irfft2": _irnd("irfft2", (-2, -1)),
    "fft_irfftn": _irnd("irfftn", None),
    "fft_fftshift": _shift(),
    "fft_ifftshift": _shift(),
}

# the Hermitian n-dimensional transforms, added later, draw from their own generator so that
# the samples above (and the files after this one) keep their arrays
with own_rng(203):
    SAMPLES.update({
        "fft_hfft2": _irnd("hfft2", (-2, -1)),
        "fft_hfftn": _irnd("hfftn", None),
        "fft_ihfft2": _resolved("ihfft2", _rnd("ihfft2", (-2, -1))),
        "fft_ihfftn": _resolved("ihfftn", _rnd("ihfftn", None)),
    })
