"""The NumPy evaluation of jaxprs that forked DataLoader workers use (_host_eval), against
XLA in this process: every rule, on inputs that reach its special cases (integer division of
negative numbers, out-of-range slice starts, NaN fills, typed keys, loops)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from torchjax import _numpy_eval as _host_eval

KEY = jax.random.PRNGKey(3)
M = jnp.arange(12.).reshape(3, 4)
INTS = (jnp.array([7, -7, 7, -7, 0]), jnp.array([2, 2, -2, -2, 3]))

CASES = {
    "prng_key": (lambda: jax.random.PRNGKey(5), ()),
    "typed_key": (lambda: jax.random.key_data(jax.random.key(5)), ()),
    "fold_in": (lambda k: jax.random.fold_in(k, 7), (KEY,)),
    "uniform": (lambda k: jax.random.uniform(k, (5,)), (KEY,)),
    "normal": (lambda k: jax.random.normal(k, (2, 3)), (KEY,)),
    "randint": (lambda k: jax.random.randint(k, (2, 3), -5, 5), (KEY,)),
    "permutation": (lambda k: jax.random.permutation(k, 7), (KEY,)),
    "split_keys": (lambda: jax.random.key_data(
        jax.random.split(jax.random.key(4), 4).reshape(2, 2)[:, 1]), ()),
    "index": (lambda a, i: (a[i], a[:, i], a[1], a[-1, 1:3]), (M, jnp.array([2, 0, -1]))),
    "take_along": (lambda a, i: jnp.take_along_axis(a, i, 1), (M, jnp.array([[2], [0], [1]]))),
    "fill": (lambda a, i: a.at[i].get(mode="fill", fill_value=-1.), (M, jnp.array([0, 5]))),
    "int_div": (lambda a, b: (a // b, a % b, jax.lax.div(a, b), jax.lax.rem(a, b)), INTS),
    "shift": (lambda a, n: (a >> 3, jax.lax.shift_right_logical(a, n), a << 2,
                            jax.lax.shift_left(a, n)),
              (jnp.array([-16, 16, 5], jnp.int32), jnp.array([3, 32, 31], jnp.int32))),
    "round": (lambda a: (jnp.round(a), jax.lax.round(a), jnp.floor(a), jnp.ceil(a)),
              (jnp.array([0.5, 1.5, -2.5, 2.4]),)),
    "math": (lambda a: (jnp.exp(a), jnp.log1p(a), jnp.tanh(a), jax.nn.sigmoid(a), a ** 3,
                        jnp.sqrt(a), jax.lax.rsqrt(a + 1), jnp.maximum(a, 2.)),
             (jnp.linspace(0., 3., 5),)),
    "erf": (lambda a: (jax.scipy.special.erf(a), jax.scipy.special.erfinv(a / 3)),
            (jnp.linspace(-2.9, 2.9, 7),)),
    "shapes": (lambda a: (a.T, a.reshape(4, 3), a[None, :, None], a.ravel()[::-2],
                          jnp.flip(a, 1), jnp.broadcast_to(a[0], (2, 4)),
                          jnp.concatenate([a, a], 1), jnp.stack([a, a], 2),
                          jnp.split(a, [1], 0)[1]), (M,)),
    "dynamic": (lambda a, i: (jax.lax.dynamic_slice(a, (i, i), (2, 2)),
                              jax.lax.dynamic_update_slice(a, jnp.ones((2, 2)), (i, 1))),
                (M, jnp.array(5))),
    "pad": (lambda a: jax.lax.pad(a, -1., [(1, -1, 1), (2, 0, 0)]), (M,)),
    "reductions": (lambda a: (a.sum(0), a.max(1), a.min(), a.prod(0), jnp.argmax(a, 1),
                              jnp.argmin(a, 0), (a > 3).all(1), (a > 3).any(0)), (M,)),
    "cumulative": (lambda a: (jnp.cumsum(a, 1), jax.lax.cummax(a[0], reverse=True),
                              jnp.cumprod(a, 0)), (M,)),
    "dot": (lambda a, b: (a @ b, jnp.einsum("bij,bjk->bik", a[None], b[None])),
            (M, M.T)),
    "sort": (lambda a, b: (jnp.sort(a), jax.lax.sort((a, b), num_keys=2), jnp.argsort(-a)),
             (jnp.array([2, 1, 2, 1]), jnp.array([4, 3, 1, 2]))),
    "where_clip": (lambda a: (jnp.where(a > 3, a, -a), jnp.clip(a, 2, 9)), (M,)),
    "convert": (lambda a: (a.astype(jnp.int32), (a > 2).astype(jnp.float32),
                           jax.lax.bitcast_convert_type(a.astype(jnp.float32), jnp.int32)),
                (M - 5.5,)),
    "iota": (lambda: (jnp.arange(5), jax.lax.broadcasted_iota(jnp.int32, (2, 3), 1)), ()),
    "cond": (lambda p, x: jax.lax.cond(p, lambda v: v * 2, lambda v: v - 1, x),
             (jnp.array(False), jnp.arange(3.))),
    "while": (lambda x: jax.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2),
                                           (0, x)), (jnp.arange(3.),)),
    "scan": (lambda x: jax.lax.scan(lambda c, v: (c + v, c * v), 0., x, reverse=True),
             (jnp.arange(4.),)),
    "searchsorted": (lambda a, v: jnp.searchsorted(a, v), (jnp.arange(10.), jnp.array([2.5, 7.]))),
}


def _plain(x):
    if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_evaluation_matches_xla(name):
    fn, args = CASES[name]
    closed = jax.make_jaxpr(fn)(*args)
    got = _host_eval.evaluate(closed.jaxpr, closed.consts, args)
    want = jax.tree.leaves(fn(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = _plain(g), _plain(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=2e-6)


def test_a_primitive_without_a_rule_is_named():
    # (in a forked worker, tests/data/test_worker_start.py: fft's impl, which compiles)
    closed = jax.make_jaxpr(jax.lax.clz)(jnp.ones(4, jnp.int32))
    with pytest.raises(_host_eval.NoRule, match="the JAX primitive 'clz'"):
        _host_eval.evaluate(closed.jaxpr, closed.consts, [np.ones(4, np.int32)])
