"""In-place samplers on Tensor (uniform_, normal_, exponential_, random_, bernoulli_, ...) and the
sampling methods (bernoulli, multinomial), honouring manual_seed and a Generator."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from . import _creation, _dtypes, _meta, _sampling
from ._autograd import grad_mode
from ._autograd.node import node_class
from ._sampling import check_bernoulli_p, check_probabilities, draw, fmt, scalar_name
from ._tensor import Tensor
from ._x64 import scoped

# the C++ type names PyTorch's random-bounds messages print
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _check_leaf(t: Tensor):
    if not grad_mode.STATE.grad_enabled:
        return
    if t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = t._base
    if t._autograd_view() and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _fill(self: Tensor, arr, grad_name: str) -> Tensor:
    """Write the samples into self. When autograd records it (self is part of a graph), the new
    node has a zero gradient, like PyTorch's <Sampler>Backward nodes."""
    base = self._base if self._autograd_view() else None
    record = (grad_mode.STATE.grad_enabled and self.dtype.is_floating_point
              and (self._requires_grad or (base is not None and base._requires_grad)))
    if not record:
        self._write(arr)
        return self
    from ._dispatch import PREPARED, dispatch_inplace
    # _copy_from writes src into self with a zero gradient for self's previous value
    dispatch_inplace(PREPARED["_copy_from"], (self, Tensor._wrap(arr)), ())
    if base is None:
        self._grad_fn.__class__ = node_class(grad_name)
    return self


def _shape(t: Tensor) -> tuple:
    return tuple(t._data.shape)


def _from_kw(kwargs: dict, from_, fname: str):
    if "from" in kwargs:
        from_ = kwargs.pop("from")
    if kwargs:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return from_


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None,
             **kwargs) -> Tensor:
    """Fill with samples from U(from, to)."""
    from_ = _from_kw(kwargs, from_, "uniform_")
    _check_leaf(self)
    d = self.dtype
    if not d.is_floating_point:
        raise NotImplementedError(
            f"\"check_uniform_bounds\" not implemented for '{scalar_name(d)}'")
    from_, to = float(from_), float(to)
    if not from_ <= to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={fmt(from_)} > to={fmt(to)}")
    if to - from_ > float(jnp.finfo(d.np).max):
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_CPP_NAMES[d.name]}"
                           f">::max(), but found to={fmt(to)} and from={fmt(from_)} which result "
                           "in to-from to exceed the limit")
    arr = _creation._sample("uniform", _shape(self), d, generator, from_, to)
    return _fill(self, arr, "UniformBackward0")


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from N(mean, std**2)."""
    _check_leaf(self)
    mean, std = float(mean), float(std)
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt(std)}")
    d = self.dtype
    if not d.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{scalar_name(d)}'")
    arr = _creation._sample("normal", _shape(self), d, generator, mean, std)
    return _fill(self, arr, "NormalBackward0")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from the exponential distribution with rate lambd."""
    _check_leaf(self)
    lambd = float(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={fmt(lambd)}")
    d = self.dtype
    if not d.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {scalar_name(d)}")
    arr = draw("exponential", _shape(self), d, generator, lambd)
    return _fill(self, arr, "ExponentialBackward0")


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    _check_leaf(self)
    p = float(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={fmt(p)}")
    d = self.dtype
    if d is _dtypes.bool or d.is_complex:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{scalar_name(d)}'")
    arr = draw("geometric", _shape(self), d, generator, p)
    return _fill(self, arr, "GeometricBackward0")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with exp(N(mean, std**2)) samples."""
    _check_leaf(self)
    mean, std = float(mean), float(std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={fmt(std)}")
    d = self.dtype
    if not d.is_floating_point:
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{scalar_name(d)}'")
    arr = draw("log_normal", _shape(self), d, generator, mean, std)
    return _fill(self, arr, "LogNormalBackward0")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples from the Cauchy distribution."""
    _check_leaf(self)
    median, sigma = float(median), float(sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={fmt(sigma)}")
    d = self.dtype
    if not d.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {_CPP_NAMES[d.name]}")
    arr = draw("cauchy", _shape(self), d, generator, median, sigma)
    return _fill(self, arr, "CauchyBackward0")


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 0/1 samples from Bernoulli(p); p is a number or a tensor broadcastable to self."""
    _check_leaf(self)
    shape = _shape(self)
    if isinstance(p, Tensor):
        if not p.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{scalar_name(p.dtype)}'")
        _check_expandable(tuple(p._data.shape), shape, p.dtype)
        check_probabilities(p._data)
        arr = draw("bernoulli", shape, self.dtype, generator, jnp.broadcast_to(p._data, shape))
        return _fill(self, arr, "BernoulliBackward1")
    p = float(p)
    check_bernoulli_p(p)
    arr = draw("bernoulli", shape, self.dtype, generator, p)
    return _fill(self, arr, "BernoulliBackward2")


def _check_expandable(src: tuple, target: tuple, d) -> None:
    if len(src) > len(target):
        raise RuntimeError(
            f"expand(torch.{_TYPE_NAMES.get(d.name, 'Tensor')}{{[{', '.join(map(str, src))}]}}, "
            f"size=[{', '.join(map(str, target))}]): the number of sizes provided "
            f"({len(target)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(src)})")
    for i in range(1, len(src) + 1):
        if src[-i] != 1 and src[-i] != target[-i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                f"({src[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                f"[{', '.join(map(str, target))}].  Tensor sizes: [{', '.join(map(str, src))}]")


_TYPE_NAMES = {"float16": "HalfTensor", "bfloat16": "BFloat16Tensor", "float32": "FloatTensor",
               "float64": "DoubleTensor"}


# -- random_ -----------------------------------------------------------------------------------

_INT64_MIN = -2 ** 63

_RANDOM_SIGNATURES = (
    " * (*, torch.Generator generator = None)\n"
    " * (int from, int to, *, torch.Generator generator = None)\n"
    " * (int to, *, torch.Generator generator = None)\n")


def _random_args(args, kwargs):
    """PyTorch's three overloads: random_(), random_(to), random_(from, to) with to=None meaning
    the largest value of the dtype. Returns (from, to, form)."""
    names = list(kwargs)
    if len(args) > 2 or any(n not in ("from", "to") for n in names):
        _bad_random_args(args, kwargs)
    if not args and not kwargs:
        return 0, None, "none"
    if len(args) == 1 and not kwargs:
        return _int_arg(args[0], args, kwargs), None, "to"
    if not args and names == ["to"]:
        return _int_arg(kwargs["to"], args, kwargs), None, "to"
    vals = dict(zip(("from", "to"), args))
    for n in names:
        if n in vals:
            _bad_random_args(args, kwargs)
        vals[n] = kwargs[n]
    if "from" not in vals or "to" not in vals:
        _bad_random_args(args, kwargs)
    to = vals["to"]
    return (_int_arg(vals["from"], args, kwargs),
            None if to is None else _int_arg(to, args, kwargs), "from")


def _int_arg(v, args, kwargs) -> int:
    if isinstance(v, Tensor) and v.dim() == 0 and not v.dtype.is_floating_point:
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        _bad_random_args(args, kwargs)
    return int(v)


def _bad_random_args(args, kwargs):
    got = ", ".join(type(a).__name__ for a in args)
    if kwargs:
        got += (", " if got else "") + "".join(f"{k}={type(v).__name__}, "
                                               for k, v in kwargs.items())
    raise TypeError(f"random_() received an invalid combination of arguments - got ({got}), "
                    f"but expected one of:\n{_RANDOM_SIGNATURES}")


def _digits(d) -> int:
    return int(jnp.finfo(d.np).nmant) + 1


def _cast_int(v: int, d) -> int | None:
    """int(static_cast<dtype>(v)), or None when it does not fit."""
    with np.errstate(over="ignore"):
        f = np.array(float(v)).astype(d.np).astype(np.float64)
    return int(f) if np.isfinite(f) else None


def _update_from(v: int, d) -> int:
    # PyTorch moves a `from` that its float dtype rounds below it up to a representable value
    plus1 = _cast_int(v + 1, d)
    if plus1 is not None and plus1 < v:
        n = abs(v + 1).bit_length() - 1
        v = plus1 + (1 << (n - _digits(d) + 1))
    return v


def _update_to(v: int, d) -> int:
    minus1 = _cast_int(v - 1, d)
    if minus1 is not None and minus1 >= v:
        n = abs(v - 1).bit_length() - 1
        v = minus1 - (1 << (n - _digits(d) + 1))
    return v


def _check_in_range(frm: int, to_inc: int, d) -> None:
    name = _CPP_NAMES[d.name]
    if d.is_floating_point:
        info = jnp.finfo(d.np)
        lo, hi = float(info.min), float(info.max)
    elif d is _dtypes.bool:
        lo, hi = 0, 1
    else:
        info = jnp.iinfo(d.np)
        lo, hi = int(info.min), int(info.max)
    for v, what in ((frm, "from"), (to_inc, "to - 1")):
        if v < lo or v > hi:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if d.is_floating_point:
        digits = _digits(d)
        for v, what in ((frm, "from"), (to_inc, "to - 1")):
            if v < -(1 << digits) or v > (1 << digits):
                warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {name} can support discrete uniform "
                              "distribution only within this range. This warning will become "
                              "an error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=4)  # 4: the user's line (past the
                              # x64-scope wrapper the Tensor method is installed with)


def _max_inclusive(d) -> int:
    if d.is_floating_point:
        return 1 << _digits(d)
    if d is _dtypes.bool:
        return 1
    return int(jnp.iinfo(d.np).max)


def random_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """Fill with integers drawn uniformly from [from, to - 1] (see PyTorch's overloads)."""
    frm, to, form = _random_args(args, kwargs)
    _check_leaf(self)
    d = self.dtype
    if d.is_complex or (form == "none" and d.name in ("uint16", "uint32", "uint64")):
        raise NotImplementedError(
            f"\"random_kernel_cpu\" not implemented for '{scalar_name(d)}'")
    if form == "none":
        low, span, grad_name = 0, _max_inclusive(d) + 1, "RandomBackward2"
    elif to is not None or form == "to":
        if form == "to":
            frm, to = 0, frm
        if not frm < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={frm} "
                               f">= to={to}")
        if d.is_floating_point:
            frm, to = _update_from(frm, d), _update_to(to, d)
            if not frm < to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' "
                                   f"casted to dtype, but got from={frm} >= to={to}")
        _check_in_range(frm, to - 1, d)
        low, span = frm, to - frm
        grad_name = "RandomBackward1" if form == "to" else "RandomBackward0"
    elif frm != _INT64_MIN:
        to_inc = _max_inclusive(d)
        if d.is_floating_point:
            frm = _update_from(frm, d)
            if not frm < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or "
                                   "equal to 'to_inc' casted to dtype, but got "
                                   f"from={frm} > to_inc={to_inc}")
        _check_in_range(frm, to_inc, d)
        low, span, grad_name = frm, to_inc - frm + 1, "RandomBackward0"
    else:
        low, span, grad_name = _INT64_MIN, 0, "RandomBackward0"  # span 0: all 2**64 values
    mask = (1 << 64) - 1
    arr = draw("random", _shape(self), d, generator, np.uint64(low & mask),
               np.uint64(span & mask))
    return _fill(self, arr, grad_name)


def install(tensor_cls=Tensor):
    for f in (uniform_, normal_, exponential_, geometric_, log_normal_, cauchy_, bernoulli_,
              random_):
        # samples of 64-bit dtypes: x64 scope; a meta tensor has no data to fill
        setattr(tensor_cls, f.__name__, _meta.no_data(scoped(f)))
    tensor_cls.bernoulli = _sampling.tensor_bernoulli
    tensor_cls.multinomial = _sampling.tensor_multinomial
