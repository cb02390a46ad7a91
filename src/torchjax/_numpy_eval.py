"""JAX programs evaluated with NumPy: a jaxpr run equation by equation with the rules below.

Two users: a forked DataLoader worker, which cannot run XLA programs but can still trace
(utils/data/_host_eval.run_jitted), and the host tier (_host_tier.py), which runs a
program's first calls this way instead of waiting for XLA to compile it. A primitive without
a rule raises NoRule naming it (`covers` says beforehand whether a jaxpr has rules for all).

Each rule reproduces the primitive's semantics where NumPy's differ (integer division
truncates, `rem` keeps the dividend's sign, `round` may round half away from zero,
out-of-bounds starts are clamped); results are cast to the dtype JAX's types say.
"""

from __future__ import annotations

import functools
import math

import numpy as np

_RULES: dict = {}


class NoRule(Exception):
    """No NumPy rule for a primitive."""


def rule(*names):
    def register(fn):
        for name in names:
            _RULES[name] = fn
        return fn
    return register


def _unary(fn):
    return lambda x, **_: fn(x)


def _binary(fn):
    return lambda x, y, **_: fn(x, y)


for _name, _fn in {
    "neg": np.negative, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "expm1": np.expm1,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "tanh": np.tanh,
    "logistic": lambda x: 1 / (1 + np.exp(-x)), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "is_finite": np.isfinite, "not": np.invert, "square": np.square, "real": np.real,
    "imag": np.imag, "conj": np.conj, "copy": np.array, "copy_p": np.array,
    "stop_gradient": np.asarray,
    "population_count": lambda x: np.array([bin(int(v)).count("1") for v in x.ravel()]
                                           ).reshape(x.shape),
}.items():
    _RULES[_name] = _unary(_fn)

for _name, _fn in {
    "add": np.add, "add_any": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
    "min": np.minimum, "atan2": np.arctan2, "nextafter": np.nextafter,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "rem": np.fmod,  # the sign of the dividend, as lax
}.items():
    _RULES[_name] = _binary(_fn)


@rule("div")
def _div(x, y, **_):
    if x.dtype.kind not in "iub":
        return np.true_divide(x, y)
    with np.errstate(divide="ignore"):
        q = np.floor_divide(x, np.where(y == 0, 1, y))
        # lax rounds towards zero, NumPy towards minus infinity
        q = q + ((np.remainder(x, np.where(y == 0, 1, y)) != 0) & ((x < 0) != (y < 0)))
    return q


@rule("shift_right_logical")
def _shift_right_logical(x, y, **_):
    bits = x.dtype.itemsize * 8
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    out = np.where(y >= bits, 0, unsigned >> np.minimum(y, bits - 1).astype(unsigned.dtype))
    return out.astype(unsigned.dtype).view(x.dtype)


@rule("shift_left")
def _shift_left(x, y, **_):
    bits = x.dtype.itemsize * 8  # lax shifts everything out; NumPy's shift wraps the count
    return np.where(y >= bits, 0, x << np.minimum(y, bits - 1).astype(x.dtype))


@rule("shift_right_arithmetic")
def _shift_right_arithmetic(x, y, **_):
    bits = x.dtype.itemsize * 8
    return x >> np.minimum(y, bits - 1).astype(x.dtype)


@rule("convert_element_type")
def _convert(x, *, new_dtype, **_):
    with np.errstate(invalid="ignore"):
        return x.astype(new_dtype)


@rule("bitcast_convert_type")
def _bitcast(x, *, new_dtype, **_):
    return x.view(new_dtype)


@rule("select_n")
def _select_n(which, *cases, **_):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which, cases)


@rule("clamp")
def _clamp(lo, x, hi, **_):
    return np.minimum(np.maximum(x, lo), hi)


@rule("broadcast_in_dim")
def _broadcast_in_dim(x, *dyn, shape, broadcast_dimensions, **_):
    if dyn:
        raise NoRule("broadcast_in_dim with dynamic shapes")
    kept = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        kept[d] = x.shape[i]
    return np.broadcast_to(x.reshape(kept), shape)


@rule("reshape")
def _reshape(x, *dyn, new_sizes, dimensions=None, **_):
    if dyn:
        raise NoRule("reshape with dynamic shapes")
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, new_sizes)


@rule("squeeze")
def _squeeze(x, *, dimensions, **_):
    return np.squeeze(x, axis=tuple(dimensions))


@rule("expand_dims")
def _expand_dims(x, *, dimensions, **_):
    return np.expand_dims(x, tuple(dimensions))


@rule("transpose")
def _transpose(x, *, permutation, **_):
    return np.transpose(x, permutation)


@rule("rev")
def _rev(x, *, dimensions, **_):
    return np.flip(x, tuple(dimensions)) if dimensions else x


@rule("slice")
def _slice(x, *, start_indices, limit_indices, strides=None, **_):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(s, e, st) for s, e, st in zip(start_indices, limit_indices, strides))]


def window_start(ndim, indices, b, index_map, op_batch, idx_batch) -> list:
    """The operand position of batch element b's window, for a gather or a scatter: its
    index vector placed by `index_map`, and the batch position on the batching dims."""
    start = [0] * ndim
    for k, d in enumerate(index_map):
        start[d] = int(indices[b + (k,)])
    for d, i in zip(op_batch, idx_batch):
        start[d] = b[i]
    return start


def _clamped_starts(shape, starts, sizes):
    return [int(min(max(int(s), 0), n - k)) for s, n, k in zip(starts, shape, sizes)]


@rule("dynamic_slice")
def _dynamic_slice(x, *starts, slice_sizes, **_):
    starts = _clamped_starts(x.shape, starts[:x.ndim], slice_sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]


@rule("dynamic_update_slice")
def _dynamic_update_slice(x, update, *starts, **_):
    starts = _clamped_starts(x.shape, starts, update.shape)
    out = np.array(x)
    out[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
    return out


@rule("concatenate")
def _concatenate(*xs, dimension, **_):
    return np.concatenate(xs, axis=dimension)


@rule("stack")
def _stack(*xs, axis, **_):
    return np.stack(xs, axis=axis)


@rule("unstack")
def _unstack(x, *, axis, **_):
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


@rule("split")
def _split(x, *, sizes, axis, **_):
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@rule("pad")
def _pad(x, value, *, padding_config, **_):
    for axis, (lo, hi, interior) in enumerate(padding_config):
        n = x.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = size + max(lo, 0) + max(hi, 0)
        out = np.full(shape, value, dtype=x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(lo, 0), max(lo, 0) + size, interior + 1)
        out[tuple(index)] = x
        index[axis] = slice(-min(lo, 0), shape[axis] + min(hi, 0))
        x = out[tuple(index)]
    return x


@rule("iota")
def _iota(*, dtype, shape, dimension, **_):
    kept = [1] * len(shape)
    kept[dimension] = shape[dimension]
    return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(kept), shape)


def _reduction(fn):
    return lambda x, *, axes, **_: fn(x, axis=tuple(axes))


for _name, _fn in {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min,
                   "reduce_prod": np.prod, "reduce_and": np.all, "reduce_or": np.any}.items():
    _RULES[_name] = _reduction(_fn)


def _arg(fn):
    def evaluate(x, *, axes, index_dtype, **_):
        return fn(x, axis=axes[0]).astype(index_dtype)  # the first NaN wins, as in lax
    return evaluate


_RULES["argmax"] = _arg(np.argmax)
_RULES["argmin"] = _arg(np.argmin)


def _cumulative(fn):
    def evaluate(x, *, axis, reverse=False, **_):
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis), axis)
        return fn(x, axis=axis)
    return evaluate


for _name, _fn in {"cumsum": np.cumsum, "cumprod": np.cumprod,
                   "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate,
                   "cumlogsumexp": np.logaddexp.accumulate}.items():
    _RULES[_name] = _cumulative(_fn)


@rule("dot_general")
def _dot_general(x, y, *, dimension_numbers, preferred_element_type=None, **_):
    # as one batched matmul (BLAS): an einsum without path optimisation loops in C per
    # element, ~100x slower for a layer's matrices
    (xc, yc), (xb, yb) = dimension_numbers
    xf = [i for i in range(x.ndim) if i not in xc and i not in xb]
    yf = [j for j in range(y.ndim) if j not in yc and j not in yb]
    batch = [x.shape[i] for i in xb]
    rows = [x.shape[i] for i in xf]
    cols = [y.shape[j] for j in yf]
    inner = math.prod(x.shape[i] for i in xc)
    if preferred_element_type is not None and x.dtype.kind != "b":
        x = x.astype(preferred_element_type, copy=False)
        y = y.astype(preferred_element_type, copy=False)
    a = np.transpose(x, [*xb, *xf, *xc]).reshape(*batch, math.prod(rows), inner)
    b = np.transpose(y, [*yb, *yc, *yf]).reshape(*batch, inner, math.prod(cols))
    return np.matmul(a, b).reshape(*batch, *rows, *cols)


def _total_order(x):
    """Integers ordered as lax's total order orders floats: -NaN < -inf < ... < -0 < +0 <
    ... < inf < NaN (the sign-magnitude bits, with the negatives' magnitudes flipped)."""
    if x.dtype.kind != "f":
        return x
    i = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return i ^ ((i >> (8 * x.dtype.itemsize - 1)) & np.iinfo(i.dtype).max)


@rule("lt_to")
def _lt_to(x, y, **_):
    return _total_order(x) < _total_order(y)


@rule("le_to")
def _le_to(x, y, **_):
    return _total_order(x) <= _total_order(y)


@rule("sort")
def _sort(*operands, dimension, num_keys=1, **_):
    # (lax sorts floats in its total order after making -0 +0 and every NaN +NaN: NaNs
    # last, zeros in their first order)
    keys = [_total_order(np.where(np.isnan(k), np.abs(k), k) + k.dtype.type(0))
            if k.dtype.kind == "f" else k for k in operands[:num_keys][::-1]]
    if num_keys == 1:
        order = np.argsort(keys[0], axis=dimension, kind="stable")
    else:
        moved = [np.moveaxis(k, dimension, -1) for k in keys]
        flat = [m.reshape(-1, m.shape[-1]) for m in moved]
        rows = [np.lexsort([f[r] for f in flat]) for r in range(flat[0].shape[0])]
        order = np.moveaxis(np.array(rows).reshape(moved[0].shape), -1, dimension)
    return [np.take_along_axis(o, order, axis=dimension) for o in operands]


def _fill_value(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


@rule("gather")
def _gather(x, indices, *, dimension_numbers, slice_sizes, mode=None, fill_value=None, **_):
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    dropped = set(dn.collapsed_slice_dims) | set(getattr(dn, "operand_batching_dims", ()))
    offset_shape = [k for d, k in enumerate(slice_sizes) if d not in dropped]
    fill = "fill" in str(mode).lower() or "drop" in str(mode).lower()
    out = np.empty(batch_shape + tuple(offset_shape), dtype=x.dtype)
    op_batch = tuple(getattr(dn, "operand_batching_dims", ()))
    idx_batch = tuple(getattr(dn, "start_indices_batching_dims", ()))
    for b in np.ndindex(*batch_shape):
        start = window_start(x.ndim, indices, b, dn.start_index_map, op_batch, idx_batch)
        if fill and any(s < 0 or s + k > n for s, k, n in zip(start, slice_sizes, x.shape)):
            out[b] = _fill_value(x.dtype, fill_value)
            continue
        start = _clamped_starts(x.shape, start, slice_sizes)
        piece = x[tuple(slice(s, s + k) for s, k in zip(start, slice_sizes))]
        out[b] = piece.reshape(offset_shape)
    # the offset dimensions sit at offset_dims of the result, the batch dimensions elsewhere
    rank = len(batch_shape) + len(offset_shape)
    batch_pos = [d for d in range(rank) if d not in dn.offset_dims]
    return np.moveaxis(out, list(range(rank)), batch_pos + list(dn.offset_dims))


# -- evaluation --------------------------------------------------------------------------------

# primitives that call a jaxpr once with their operands, and the parameter holding it
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr",
          "core_call": "call_jaxpr", "remat": "jaxpr", "checkpoint": "jaxpr",
          "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
          "custom_vjp_call_jaxpr": "fun_jaxpr"}


def _call(closed, args) -> list:
    if hasattr(closed, "consts"):
        return evaluate(closed.jaxpr, closed.consts, args)
    return evaluate(closed, (), args)


def _cond(index, *operands, branches, **_):
    return _call(branches[int(index)], operands)


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, **_):
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(_call(cond_jaxpr, cond_consts + carry)[0]):
        carry = _call(body_jaxpr, body_consts + carry)
    return carry


def _scan(*args, jaxpr, length, reverse, num_consts, num_carry, **_):
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    ys = []
    for i in (reversed(range(length)) if reverse else range(length)):
        out = _call(jaxpr, consts + carry + [x[i] for x in xs])
        carry, y = out[:num_carry], out[num_carry:]
        ys.append(y)
    if reverse:
        ys.reverse()
    n_ys = len(jaxpr.out_avals) - num_carry
    stacked = [np.stack([y[k] for y in ys]) if ys else
               np.zeros((0, *jaxpr.out_avals[num_carry + k].shape),
                        jaxpr.out_avals[num_carry + k].dtype) for k in range(n_ys)]
    return carry + stacked


_CONTROL = {"cond": _cond, "while": _while, "scan": _scan}


def _is_plain(aval) -> bool:
    dtype = getattr(aval, "dtype", None)
    return dtype is not None and isinstance(dtype, np.dtype)


def _as_numpy(value):
    return np.asarray(value) if not hasattr(value, "_base_array") else value


_IN_IMPL: set = set()


def _python_impl(prim):
    """The primitive's own Python evaluation (random_bits, random_wrap, ...), if it has one
    that is not a compiled program."""
    from jax._src import dispatch
    impl = getattr(prim, "impl", None)
    if impl is None or (isinstance(impl, functools.partial)
                        and impl.func is dispatch.apply_primitive):
        return None
    return impl


def evaluate(jaxpr, consts, args) -> list:
    """The values of `jaxpr`'s outputs for `args`, computed with NumPy."""
    from jax._src import core
    env = {}

    def read(v):
        return np.asarray(v.val) if isinstance(v, core.Literal) else env[v]

    for v, value in zip(jaxpr.constvars, consts):
        env[v] = _as_numpy(value)
    for v, value in zip(jaxpr.invars, args):
        env[v] = _as_numpy(value)
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        name = eqn.primitive.name
        if name in _CALLS:
            outs = _call(eqn.params[_CALLS[name]], invals)
        elif name in _CONTROL:
            outs = _CONTROL[name](*invals, **eqn.params)
        elif (keyed := _on_keys(name, invals, eqn.params)) is not None:
            outs = keyed
        elif name in _RULES:
            outs = _RULES[name](*invals, **eqn.params)
        elif name not in _IN_IMPL and (impl := _python_impl(eqn.primitive)) is not None:
            _IN_IMPL.add(name)  # an impl that is a compiled program comes back here
            try:
                outs = impl(*invals, **eqn.params)
            finally:
                _IN_IMPL.discard(name)
        else:
            raise NoRule(f"the JAX primitive '{name}'")
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, out in zip(eqn.outvars, outs):
            if _is_plain(v.aval):
                out = np.asarray(out, dtype=v.aval.dtype)
            env[v] = out
    return [read(v) for v in jaxpr.outvars]


# what `covers` lets through per equation: a gather or scatter loops in Python per index
_MAX_INDEXED = 1 << 14
_INDEXED = frozenset({"gather", "scatter", "scatter-add", "scatter_add", "scatter-mul",
                      "scatter_mul", "scatter-min", "scatter_min", "scatter-max",
                      "scatter_max"})


def covers(jaxpr, stop=frozenset()) -> bool:
    """Whether every equation of `jaxpr` (and of the jaxprs it calls) has a rule here, none is
    in `stop`, and none would be slow: a gather or scatter over many indices."""
    return uncovered(jaxpr, stop) is None


def inner_jaxprs(eqn) -> list:
    """The open jaxprs a call or control-flow equation evaluates (none for the others)."""
    name = eqn.primitive.name
    if name in _CALLS:
        inner = [eqn.params[_CALLS[name]]]
    elif name in _CONTROL:
        inner = list(eqn.params.get("branches", ()))
        inner += [eqn.params[p] for p in ("cond_jaxpr", "body_jaxpr", "jaxpr")
                  if p in eqn.params]
    else:
        return []
    return [getattr(j, "jaxpr", j) for j in inner]


def uncovered(jaxpr, stop=frozenset()) -> str | None:
    """Why `covers` says no (the first primitive in the way), or None."""
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in stop:
            return name
        if name in _CALLS or name in _CONTROL:
            why = next((w for j in inner_jaxprs(eqn) if (w := uncovered(j, stop))), None)
        elif name not in _RULES:
            why = name
        elif name in _INDEXED and math.prod(eqn.invars[1].aval.shape[:-1]) > _MAX_INDEXED:
            why = f"{name} over many indices"
        else:
            why = None
        if why is not None:
            return why
    return None


from . import _numpy_math, _numpy_nn  # noqa: E402,F401  (they register their rules)
from ._numpy_random import _on_keys  # noqa: E402  (and the random bits' and keys' rules)
