"""PyTorch's dtypes that torchjax names but cannot hold values of.

torch.complex32 (chalf), the sub-byte integers int1..int7 and uint1..uint7 (torch.bit is
uint1), the bit containers bits8/bits16/bits1x8/bits2x4/bits4x2, float4_e2m1fn_x2 (two
4-bit floats packed in a byte) and the quantized types qint8/quint8/qint32/quint4x2/quint2x4.

Each is a torchjax.dtype with PyTorch's repr and flags (is_floating_point, is_complex,
is_signed, itemsize), so code that compares dtypes, keys tables on them or prints them works.
A tensor of one needs a JAX array of that type: JAX has no complex32, no packed float4 and no
quantized types, and torchjax does not map the sub-byte ones (PyTorch keeps one value per byte
in them and has almost no operators for them). So reading the dtype's array type, which every
tensor-making path does, raises a TypeError naming the dtype.
"""

from __future__ import annotations

from . import _dtypes

__all__ = ["complex32", "chalf", "bit", "float4_e2m1fn_x2",
           "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
           "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2"]
__all__ += [f"int{n}" for n in range(1, 8)] + [f"uint{n}" for n in range(1, 8)]

_WHY = {
    "complex": "JAX has no complex32 (complex half) type",
    "float4": "JAX has no packed float4_e2m1fn_x2 type",
    "subbyte": "torchjax does not hold sub-byte integer tensors",
    "bits": "torchjax does not hold bits tensors",
    "quantized": "quantized tensors are not supported by torchjax",
}


class _StorageOnlyDtype(_dtypes.dtype):
    """A dtype object without a JAX array type: its flags answer, its `np` raises."""

    # `np` and `is_signed` are properties here, shadowing the base class's slots
    __slots__ = ("_why", "_signed")

    def __init__(self, name, *, why, floating=False, complex_=False, signed=True, itemsize=1):
        self.name = name
        self.is_floating_point = floating
        self.is_complex = complex_
        self.itemsize = itemsize
        self._rank = 3 if complex_ else 2 if floating else 1
        self._why = why
        self._signed = signed  # None: PyTorch raises for this type (bits, quantized)

    @property
    def np(self):
        raise TypeError(f"torch.{self.name} tensors are not supported by torchjax "
                        f"({_WHY[self._why]})")

    @property
    def is_signed(self):
        if self._signed is None:
            raise RuntimeError("Bits types are undefined" if self._why == "bits" else
                               "isSignedType not supported for quantized types")
        return self._signed


complex32 = chalf = _StorageOnlyDtype("complex32", complex_=True, itemsize=4, why="complex")
float4_e2m1fn_x2 = _StorageOnlyDtype("float4_e2m1fn_x2", floating=True, why="float4")
for _n in range(1, 8):
    globals()[f"int{_n}"] = _StorageOnlyDtype(f"int{_n}", why="subbyte")
    globals()[f"uint{_n}"] = _StorageOnlyDtype(f"uint{_n}", signed=False, why="subbyte")
bit = globals()["uint1"]
bits8, bits1x8, bits2x4, bits4x2 = (_StorageOnlyDtype(n, signed=None, why="bits")
                                    for n in ("bits8", "bits1x8", "bits2x4", "bits4x2"))
bits16 = _StorageOnlyDtype("bits16", signed=None, itemsize=2, why="bits")
qint8, quint8, quint4x2, quint2x4 = (_StorageOnlyDtype(n, signed=None, why="quantized")
                                     for n in ("qint8", "quint8", "quint4x2", "quint2x4"))
qint32 = _StorageOnlyDtype("qint32", signed=None, itemsize=4, why="quantized")

ALL = tuple(globals()[n] for n in __all__ if n not in ("chalf", "bit"))
# torch.dtype objects pickle by name (_dtypes._by_name), and to_dtype("complex32") finds them
_dtypes._BY_NAME.update({d.name: d for d in ALL})
_dtypes.ALIASES.update(chalf=complex32, bit=bit)
