"""Random sampling functions of the torch namespace (bernoulli, multinomial, poisson, ...),
honouring manual_seed and an explicit Generator.

Every draw takes one key from the generator (its offset advances by one per call), so the same
seed gives the same numbers and consecutive calls give fresh ones. The values cannot equal
PyTorch's bits; the distributions, supports, dtypes, shapes and errors do.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes, _programs, _random
from ._autograd import grad_mode
from ._autograd.node import Node, accumulator_of, node_class
from ._tensor import Tensor
from ._x64 import scope_functions, scoped

__all__ = ["bernoulli", "binomial", "multinomial", "poisson"]

P_IN_MSG = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")


def fmt(v) -> str:
    """A number as PyTorch's C++ messages print it (ostream's default 6 significant digits)."""
    return f"{v:g}"


def scalar_name(d: _dtypes.dtype) -> str:
    return _dtypes.SCALAR_NAMES[d.name]


def compute_dtype(np_dtype):
    """Draw half-precision samples in float32 and double ones in float64, then cast."""
    return np.dtype(np.float64) if np.dtype(np_dtype) == np.float64 else np.dtype(np.float32)


@functools.lru_cache(maxsize=512)
def _kernel(kind: str, shape: tuple, np_dtype, extra=None):
    """A jitted sampler f(key, offset, *params) for one (kind, shape, dtype)."""
    out_dt = np.dtype(np_dtype)
    cd = compute_dtype(out_dt) if jnp.issubdtype(out_dt, jnp.floating) else np.dtype(np.float64)

    def f(key, offset, *params):
        k = jax.random.fold_in(key, offset)
        if kind == "exponential":
            (lambd,) = params
            return (jax.random.exponential(k, shape, cd) / lambd).astype(out_dt)
        if kind == "geometric":
            (p,) = params
            # the number of Bernoulli(p) trials up to and including the first success
            u = jax.random.uniform(k, shape, jnp.float64)
            return (jnp.floor(jnp.log1p(-u) / jnp.log1p(-p)) + 1).astype(out_dt)
        if kind == "log_normal":
            mean, std = params
            return jnp.exp(mean + std * jax.random.normal(k, shape, cd)).astype(out_dt)
        if kind == "cauchy":
            median, sigma = params
            return (median + sigma * jax.random.cauchy(k, shape, cd)).astype(out_dt)
        if kind == "bernoulli":
            (p,) = params  # a number or an array broadcastable to shape
            p = jnp.asarray(p)
            pc = compute_dtype(p.dtype) if jnp.issubdtype(p.dtype, jnp.floating) else cd
            u = jax.random.uniform(k, shape, pc)
            return (u < p.astype(pc)).astype(out_dt)
        if kind == "random":
            low, span = params  # uint64; span 0 means the full 2**64 range
            bits = jax.random.bits(k, shape, jnp.uint64)
            span = jnp.asarray(span, jnp.uint64)
            r = jnp.where(span == 0, bits, bits % jnp.where(span == 0, 1, span).astype(
                jnp.uint64))
            v = jax.lax.bitcast_convert_type(r + jnp.asarray(low, jnp.uint64), jnp.int64)
            return v.astype(out_dt)
        if kind == "poisson":
            (lam,) = params
            lam = lam.astype(compute_dtype(lam.dtype))
            return jax.random.poisson(k, lam, shape, jnp.int64).astype(out_dt)
        if kind == "binomial":
            count, prob = params
            pc = compute_dtype(prob.dtype)
            # PyTorch's sampler: no draws for a count below 0, all for a probability above 1
            n = jnp.maximum(count.astype(pc), 0)
            p = jnp.clip(prob.astype(pc), 0, 1)
            out = jax.random.binomial(k, n, p, shape, pc)
            return jnp.where(jnp.isnan(prob), jnp.nan, out).astype(out_dt)
        if kind == "multinomial":
            (probs,) = params
            n, replacement = extra
            pc = probs.astype(compute_dtype(probs.dtype))
            if replacement:
                cdf = jnp.cumsum(pc, axis=-1)
                cdf = cdf / cdf[:, -1:]  # exactly 1 at the end: never past the last category
                u = jax.random.uniform(k, (pc.shape[0], n), pc.dtype)
                idx = jax.vmap(lambda c, x: jnp.searchsorted(c, x, side="right"))(cdf, u)
                return jnp.minimum(idx, pc.shape[1] - 1).astype(jnp.int64)
            # Gumbel top-k: distinct indices, drawn with probability proportional to p
            g = jax.random.gumbel(k, pc.shape, pc.dtype)
            return jax.lax.top_k(jnp.log(pc) + g, n)[1].astype(jnp.int64)
        raise ValueError(kind)

    return _programs.jit(f)


@scoped  # the samplers' bits depend on x64 (a uniform draw is float64 under it)
def draw(kind: str, shape: tuple, d: _dtypes.dtype, generator, *params, extra=None):
    """One random draw of `kind` as a jax array of dtype d (advances the generator)."""
    key, offset = _random.key_parts(generator)
    return _kernel(kind, tuple(shape), d.np, extra)(key, offset, *params)


# -- autograd: PyTorch gives sampled outputs a node whose gradient is zero ----------------------

class _NotImplementedNode(Node):
    """PyTorch's grad_fn=<NotImplemented>: backward through it raises."""

    __slots__ = ("_what",)

    def apply(self, cts, retain_graph: bool):
        raise RuntimeError(f"derivative for {self._what} is not implemented")


_NotImplementedNode.__name__ = _NotImplementedNode.__qualname__ = "NotImplemented"


def _needs_node(t: Tensor) -> bool:
    return grad_mode.STATE.grad_enabled and t._requires_grad


def with_zero_grad(arr, input: Tensor, grad_name: str) -> Tensor:
    """arr as a result of `input` whose gradient to input is zero (PyTorch's <Name>Backward0)."""
    if not _needs_node(input):
        return Tensor._wrap(arr)
    from ._dispatch import call_op
    # _copy_from(input, src) has src's values and a zero gradient for input
    out = call_op("_copy_from", input, Tensor._wrap(arr))
    out._grad_fn.__class__ = node_class(grad_name)
    return out


def with_not_implemented(arr, input: Tensor, what: str) -> Tensor:
    out = Tensor._wrap(arr)
    if _needs_node(input) and out.dtype.is_floating_point:
        e = (input._grad_fn, input._output_nr) if input._grad_fn is not None else (
            accumulator_of(input), 0)
        node = _NotImplementedNode(None, None, (e,), (), 1, has_saved=False)
        node._what = what
        out._requires_grad = True
        out._grad_fn = node
    return out


# -- argument checks ---------------------------------------------------------------------------

def _require_tensor(fname, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")


def _require_int(fname, name, pos, v):
    if isinstance(v, Tensor) and v.dim() == 0 and not v.dtype.is_floating_point:
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(v).__name__}")
    return int(v)


def _as_float(v) -> float:
    return float(v.item()) if isinstance(v, Tensor) else float(v)


def check_probabilities(arr) -> None:
    """Raise PyTorch's error unless every value is in [0, 1] (NaN is not)."""
    if arr.size and not bool(jnp.all((arr >= 0) & (arr <= 1))):
        raise RuntimeError(P_IN_MSG)


def check_bernoulli_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt(p)}")


# -- public functions --------------------------------------------------------------------------

def bernoulli(input, p=None, *, generator=None) -> Tensor:
    """Draw 0/1 values: from Bernoulli(input) elementwise, or from Bernoulli(p) shaped like input."""
    _require_tensor("bernoulli", "input", 1, input)
    shape = tuple(input._data.shape)
    if p is None:
        if not input.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{scalar_name(input.dtype)}'")
        check_probabilities(input._data)
        arr = draw("bernoulli", shape, input.dtype, generator, input._data)
        return with_zero_grad(arr, input, "BernoulliBackward0")
    p = _as_float(p)
    check_bernoulli_p(p)
    arr = draw("bernoulli", shape, input.dtype, generator, p)
    return with_not_implemented(arr, input, "aten::bernoulli")


def multinomial(input, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Sample num_samples category indices per row of the (unnormalised) probabilities."""
    _require_tensor("multinomial", "input", 1, input)
    n = _require_int("multinomial", "num_samples", 2, num_samples)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_name(input.dtype)}")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = input.shape[-1]
    if not replacement and n > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_cat > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    probs = input._data if input.dim() == 2 else input._data[None]
    out_shape = (probs.shape[0], n)
    if probs.shape[0] * n == 0:
        arr = jnp.zeros(out_shape, jnp.int64)
    else:
        _check_multinomial_values(np.asarray(probs.astype(jnp.float64)), replacement and n > 1)
        arr = draw("multinomial", out_shape, _dtypes.int64, generator, probs,
                   extra=(n, bool(replacement)))
    return Tensor._wrap(arr if input.dim() == 2 else arr[0])


def _check_multinomial_values(p: np.ndarray, per_entry: bool) -> None:
    """PyTorch's checks: without replacement (or one sample) on the whole tensor, otherwise
    row by row, entry by entry, as its sampling kernel meets them."""
    sums = p.sum(axis=1)
    if not per_entry:
        if not (np.all(p >= 0) and np.all(p < np.inf)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(sums == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return
    bad = ~(p >= 0) | ~np.isfinite(p)
    row_fails = bad.any(axis=1) | ~(sums > 0)
    if not row_fails.any():
        return
    r = int(np.argmax(row_fails))
    if bad[r].any():
        v = p[r, int(np.argmax(bad[r]))]
        if not v >= 0:
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry < 0)")
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "= infinity or NaN)")
    raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def poisson(input, generator=None) -> Tensor:
    """Draw from Poisson(input) elementwise (input holds the rates)."""
    _require_tensor("poisson", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"poisson_cpu\" not implemented for '{scalar_name(input.dtype)}'")
    lam = input._data
    if lam.size and not bool(jnp.all(lam >= 0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    arr = draw("poisson", tuple(lam.shape), input.dtype, generator, lam)
    return with_zero_grad(arr, input, "PoissonBackward0")


def binomial(count, prob, generator=None) -> Tensor:
    """Draw from Binomial(count, prob) elementwise (float counts and probabilities)."""
    _require_tensor("binomial", "count", 1, count)
    _require_tensor("binomial", "prob", 2, prob)
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{scalar_name(count.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {scalar_name(prob.dtype)} but expected "
                           f"{scalar_name(count.dtype)}")
    shape = tuple(np.broadcast_shapes(tuple(count.shape), tuple(prob.shape)))
    arr = draw("binomial", shape, count.dtype, generator, count._data, prob._data)
    return with_not_implemented(arr, prob, "aten::binomial")


def tensor_bernoulli(self, p=None, *, generator=None) -> Tensor:
    """Tensor.bernoulli: draw 0/1 values from Bernoulli(self) or Bernoulli(p)."""
    return bernoulli(self, p, generator=generator)


def tensor_multinomial(self, num_samples, replacement=False, *, generator=None) -> Tensor:
    """Tensor.multinomial: sample category indices from the probabilities in self."""
    return multinomial(self, num_samples, replacement, generator=generator)


scope_functions(globals(), __all__)  # the public samplers run in torchjax's x64 scope
