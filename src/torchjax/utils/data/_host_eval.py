"""JAX programs evaluated with NumPy: how a forked DataLoader worker computes.

A forked worker cannot run XLA programs (see _start), but it can still trace: JAX turns a
call into a jaxpr without the runtime. `run_jitted` stands in for JAX's call of a jitted
function in such a worker: it evaluates the jaxpr equation by equation with the NumPy rules
below and puts the results on the host device with device_put (which needs no program).
Every torchjax op and every eager jax.numpy call goes through there, so a dataset that
indexes, converts, stacks or draws random numbers from torchjax tensors works in a forked
worker, at NumPy's speed. A primitive without a rule raises ForkedWorkerError naming it.

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
    "population_count": lambda x: np.array([bin(int(v)).count("1") for v in x.ravel()]
                                           ).reshape(x.shape),
}.items():
    _RULES[_name] = _unary(_fn)

for _name, _fn in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
    "min": np.minimum, "pow": np.power, "atan2": np.arctan2, "nextafter": np.nextafter,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "lt_to": np.less, "le_to": np.less_equal,
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


@rule("integer_pow")
def _integer_pow(x, *, y, **_):
    return x ** y if y >= 0 else 1 / x ** -y


@rule("round")
def _round(x, *, rounding_method=0, **_):
    if int(rounding_method) == 1:  # to nearest even
        return np.round(x)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


@rule("erf")
def _erf(x, **_):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


@rule("erfc")
def _erfc(x, **_):
    return np.vectorize(math.erfc, otypes=[x.dtype])(x)


@rule("erf_inv")
def _erf_inv(x, **_):
    # Winitzki's approximation, then Newton steps on erf: exact to float64 rounding
    x64 = x.astype(np.float64)
    a = 0.147
    w = -np.log((1 - x64) * (1 + x64))
    t = 2 / (np.pi * a) - w / 2
    y = np.sign(x64) * np.sqrt(np.sqrt(t * t + w / a) - t)
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(3):
        step = (erf(y) - x64) / (2 / np.sqrt(np.pi) * np.exp(-y * y))
        y = np.where(np.isfinite(step), y - step, y)
    return np.where(np.abs(x64) == 1, np.copysign(np.inf, x64), y)


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
    (xc, yc), (xb, yb) = dimension_numbers
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    xs = [next(letters) for _ in range(x.ndim)]
    ys = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(xc, yc):
        ys[j] = xs[i]
    for i, j in zip(xb, yb):
        ys[j] = xs[i]
    out = [xs[i] for i in xb]
    out += [xs[i] for i in range(x.ndim) if i not in xc and i not in xb]
    out += [ys[j] for j in range(y.ndim) if j not in yc and j not in yb]
    return np.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", x, y)


@rule("sort")
def _sort(*operands, dimension, num_keys=1, **_):
    keys = operands[:num_keys][::-1]
    if num_keys == 1:
        order = np.argsort(operands[0], axis=dimension, kind="stable")
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
        start = [0] * x.ndim
        for k, d in enumerate(dn.start_index_map):
            start[d] = int(indices[b + (k,)])
        for d, i in zip(op_batch, idx_batch):
            start[d] = b[i]
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


@rule("iota_2x32_shape")
def _iota_2x32_shape(*, shape, **_):
    """A row-major uint64 iota of `shape`, as its high and low 32-bit words."""
    count = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return [(count >> np.uint64(32)).astype(np.uint32), count.astype(np.uint32)]


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


@rule("threefry2x32")
def _threefry2x32(k1, k2, x1, x2, **_):
    """The Threefry-2x32 block cipher (20 rounds), as JAX's random bits use it."""
    k1, k2, x1, x2 = (np.asarray(a, np.uint32) for a in np.broadcast_arrays(k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    with np.errstate(over="ignore"):
        x1, x2 = x1 + ks[0], x2 + ks[1]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x1 = x1 + x2
                x2 = (x2 << np.uint32(r)) | (x2 >> np.uint32(32 - r))
                x2 = x2 ^ x1
            x1 = x1 + ks[(i + 1) % 3]
            x2 = x2 + ks[(i + 2) % 3] + np.uint32(i + 1)
    return [x1, x2]


# -- arrays of PRNG keys ------------------------------------------------------------------------
# Structural primitives applied to typed keys (splitting, indexing a key array) run on the
# keys' uint32 data, whose trailing dimensions (the key's own shape) they leave alone.

def _key_slice(x, *, start_indices, limit_indices, strides=None, tail, **_):
    strides = strides or (1,) * len(start_indices)
    return _slice(x, start_indices=(*start_indices, *(0,) * len(tail)),
                  limit_indices=(*limit_indices, *tail), strides=(*strides, *(1,) * len(tail)))


def _key_dynamic_slice(x, *starts, slice_sizes, tail, **_):
    return _dynamic_slice(x, *starts, *(0,) * len(tail), slice_sizes=(*slice_sizes, *tail))


def _key_reshape(x, *dyn, new_sizes, dimensions=None, tail, **_):
    return _reshape(x, *dyn, new_sizes=(*new_sizes, *tail), dimensions=None if dimensions
                    is None else (*dimensions, *range(len(dimensions), x.ndim)))


def _key_broadcast_in_dim(x, *dyn, shape, broadcast_dimensions, tail, **_):
    n = len(shape)
    return _broadcast_in_dim(x, *dyn, shape=(*shape, *tail), broadcast_dimensions=(
        *broadcast_dimensions, *range(n, n + len(tail))))


def _key_transpose(x, *, permutation, tail, **_):
    n = len(permutation)
    return np.transpose(x, (*permutation, *range(n, n + len(tail))))


def _key_select_n(which, *cases, tail, **_):
    return _select_n(np.reshape(which, which.shape + (1,) * len(tail)), *cases)


def _key_same(rule_fn):
    return lambda *xs, tail, **params: rule_fn(*xs, **params)


_KEY_RULES = {
    "slice": _key_slice, "dynamic_slice": _key_dynamic_slice, "reshape": _key_reshape,
    "broadcast_in_dim": _key_broadcast_in_dim, "transpose": _key_transpose,
    "select_n": _key_select_n, "squeeze": _key_same(_squeeze),
    "expand_dims": _key_same(_expand_dims), "concatenate": _key_same(_concatenate),
    "rev": _key_same(_rev), "copy": _key_same(np.array), "copy_p": _key_same(np.array),
}


def _on_keys(name, invals, params):
    """`name` applied to arrays of typed keys, or None when no input is one."""
    keys = [v for v in invals if hasattr(v, "_base_array")]
    if not keys or name not in _KEY_RULES:  # random_* primitives evaluate themselves
        return None
    from jax._src.random import prng
    impl = keys[0]._impl
    data = [np.asarray(v._base_array) if hasattr(v, "_base_array") else v for v in invals]
    out = _KEY_RULES[name](*data, tail=tuple(impl.key_shape), **params)
    return prng.PRNGKeyArray(impl, np.asarray(out))


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


def run_jitted(*args, jaxpr, **params):
    """Stands in for jax's _pjit_call_impl_python in a forked worker (same arguments and
    results: outputs, executable, profiler, constant arguments)."""
    import jax

    from ._start import ForkedWorkerError, fork_message
    try:
        with np.errstate(all="ignore"):  # lax computes inf and NaN silently
            outs = evaluate(jaxpr.jaxpr, jaxpr.consts, args)
    except NoRule as e:
        raise ForkedWorkerError(fork_message(f"{e} has no NumPy evaluation")) from None
    outs = [jax.device_put(np.asarray(o, order="C")) if isinstance(o, np.ndarray) else o
            for o in outs]
    return outs, None, None, []
