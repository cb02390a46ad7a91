"""PyTorch dtypes on top of JAX dtypes, the default dtype, and PyTorch's type promotion."""

from __future__ import annotations

import builtins
import functools
import threading

import jax.numpy as jnp
import numpy as np


class dtype:
    """A PyTorch dtype; wraps the matching numpy/JAX dtype."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_rank")

    def __init__(self, name: str, np_dtype, rank: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        kind = self.np.kind
        # bfloat16 and the float8 types are NumPy extension types (ml_dtypes), of kind "V"
        extension_float = name == "bfloat16" or name.startswith("float8")
        self.is_floating_point = kind == "f" or extension_float
        self.is_complex = kind == "c"
        self.is_signed = (kind in "fci" or extension_float) and name != "float8_e8m0fnu"
        self.itemsize = self.np.itemsize
        self._rank = rank  # 0 bool, 1 integer, 2 floating, 3 complex: promotion category

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self) -> dtype:
        return {"float64": complex128, "float16": complex64}.get(self.name, complex64) \
            if not self.is_complex else self


bool = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
uint16 = dtype("uint16", np.uint16, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
float16 = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", jnp.bfloat16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)
# storage formats for scaled matmuls: PyTorch converts to and from them, copies and views
# them, and promotes them with nothing (promote_types)
float8_e4m3fn = dtype("float8_e4m3fn", jnp.float8_e4m3fn, 2)
float8_e5m2 = dtype("float8_e5m2", jnp.float8_e5m2, 2)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", jnp.float8_e4m3fnuz, 2)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", jnp.float8_e5m2fnuz, 2)
float8_e8m0fnu = dtype("float8_e8m0fnu", jnp.float8_e8m0fnu, 2)
FLOAT8 = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)

ALL = (bool, uint8, int8, int16, int32, int64, uint16, uint32, uint64,
       float16, bfloat16, float32, float64, complex64, complex128) + FLOAT8

ALIASES = {
    "half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
    "long": int64, "cfloat": complex64, "cdouble": complex128, "complex32": None,
}

_FROM_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_jax(np_dtype) -> dtype:
    """The torchjax dtype of a numpy/JAX dtype."""
    try:
        return _FROM_NP[np_dtype]
    except KeyError:
        d = _FROM_NP.get(np.dtype(np_dtype))
        if d is None:
            raise TypeError(f"dtype {np_dtype} has no torchjax equivalent") from None
        return d


def to_dtype(d) -> dtype:
    """Accept a torchjax dtype, a Python type (float, int, bool, complex) or a numpy dtype."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return get_default_dtype()
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return get_default_dtype().to_complex()
    if isinstance(d, str):
        name = d[len("torch."):] if d.startswith("torch.") else d
        got = _BY_NAME.get(name) or ALIASES.get(name)
        if got is None:
            raise TypeError(f"invalid dtype {d!r}")
        return got
    try:
        return from_jax(np.dtype(d))
    except TypeError:
        raise TypeError(f"expected a torchjax dtype, got {d!r}") from None


class _DefaultDtype(threading.local):
    def __init__(self):
        self.value = float32


_default = _DefaultDtype()


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    return _default.value


_listeners: list = []


def on_default_dtype_change(fn) -> None:
    """Call fn() whenever the default dtype changes (caches keyed on promotion results)."""
    _listeners.append(fn)


def set_default_dtype(d) -> None:
    """Set the default floating dtype; only float16, bfloat16, float32 and float64 are allowed."""
    d = to_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d
    _result_cache.clear()
    for fn in _listeners:
        fn()


@functools.cache
def promote_types(type1: dtype, type2: dtype) -> dtype:
    """PyTorch's promotion of two dtypes (same lattice as JAX with x64 for these types)."""
    a, b = type1, type2
    a.np, b.np  # noqa: B018  (a dtype torchjax holds no values of, complex32, raises here)
    if a is b:
        return a
    if a in FLOAT8 or b in FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote "
                           f"{SCALAR_NAMES[a.name]} and {SCALAR_NAMES[b.name]}")
    if {a.name, b.name} == {"bfloat16", "float16"}:
        return float32
    if a.is_complex or b.is_complex:
        # complex with a wider real keeps the wider precision
        real = promote_types(a.to_real(), b.to_real())
        return complex128 if real is float64 else complex64
    if a._rank == 1 and b._rank == 1 and a.is_signed != b.is_signed:
        # unsigned with signed: the smallest signed type holding both, int64 at most
        u, s = (a, b) if not a.is_signed else (b, a)
        need = max(u.itemsize * 2, s.itemsize)
        return {1: int8, 2: int16, 4: int32}.get(need, int64)
    return from_jax(jnp.promote_types(a.np, b.np))


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # Mirrors c10's combine_categories: a lower-priority group only wins when it is of a
    # higher category (float over int, complex over float).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(v) -> dtype:
    t = type(v)
    if t is builtins.bool or isinstance(v, (np.bool_,)):
        return bool
    if t is builtins.int or isinstance(v, np.integer):
        return int64
    if t is builtins.complex:
        return get_default_dtype().to_complex()
    return get_default_dtype()


def result_type_from_keys(keys) -> dtype:
    """Promotion over argument keys: (dtype, group) with group 0 dim tensor, 1 0-d, 2 scalar."""
    groups: list[dtype | None] = [None, None, None]
    for d, g in keys:
        cur = groups[g]
        groups[g] = d if cur is None else promote_types(cur, d)
    return _combine_categories(groups[0], _combine_categories(groups[1], groups[2]))


_result_cache: dict = {}


def result_type_of(args) -> dtype:
    """PyTorch's result dtype of Tensors, arrays and Python numbers mixed together."""
    keys = []
    for a in args:
        if a is None:
            continue
        arr = getattr(a, "_data", None)
        if arr is not None:
            keys.append((from_jax(arr.dtype), 0 if arr.ndim else 1))
        elif isinstance(a, (builtins.bool, builtins.int, builtins.float, builtins.complex,
                            np.number, np.bool_)):
            keys.append((_scalar_dtype(a), 2))
        elif hasattr(a, "dtype") and hasattr(a, "ndim"):
            keys.append((from_jax(a.dtype), 0 if a.ndim else 1))
        else:
            raise TypeError(f"expected a Tensor or a number, got {type(a).__name__}")
    key = tuple(keys)
    got = _result_cache.get(key)
    if got is None:
        got = _result_cache[key] = result_type_from_keys(key)
    return got


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """PyTorch's same-kind rule: no complex to real, float to integer, or non-bool to bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    if from_ is not bool and to is bool:
        return False
    return True


# The C++ type names some of PyTorch's messages use ("Could not set tensor of type long int").
CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}


# Names PyTorch prints in messages such as "result type Float can't be cast to ... Long".
SCALAR_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
    "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
    "float8_e8m0fnu": "Float8_e8m0fnu",
}
