"""The NumPy rules of convolutions, pooling, scatters and dot products (_numpy_nn,
_numpy_eval's dot_general) against XLA: the jaxpr of each case evaluated both ways."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from torchjax import _numpy_eval

R = np.random.default_rng(0)


def _f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _conv(strides, pad, lhs_dil=(1, 1), rhs_dil=(1, 1), groups=1, dn=("NCHW", "OIHW", "NCHW")):
    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, pad, lhs_dil, rhs_dil, dn,
                                        feature_group_count=groups)
    return f


def _pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def _avg(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 1, 1), ((0, 0), (0, 0),
                                                                            (1, 1), (1, 1)))


CASES = {
    "conv": (_conv((1, 1), "SAME"), (_f32(4, 3, 8, 8), _f32(5, 3, 3, 3))),
    "conv_stride_pad": (_conv((2, 1), ((1, 2), (0, 1))), (_f32(2, 3, 9, 7), _f32(4, 3, 3, 2))),
    "conv_dilated": (_conv((1, 1), "VALID", rhs_dil=(2, 2)), (_f32(2, 2, 9, 9), _f32(3, 2, 3, 3))),
    "conv_transposed": (_conv((1, 1), ((2, 2), (2, 2)), lhs_dil=(2, 2)),
                        (_f32(2, 3, 5, 5), _f32(4, 3, 3, 3))),
    "conv_groups": (_conv((1, 1), "SAME", groups=2), (_f32(2, 4, 6, 6), _f32(6, 2, 3, 3))),
    "conv_nhwc": (_conv((1, 1), "SAME", dn=("NHWC", "HWIO", "NHWC")),
                  (_f32(2, 6, 6, 3), _f32(3, 3, 3, 4))),
    "conv_negative_pad": (_conv((1, 1), ((-1, 0), (0, -1))), (_f32(1, 2, 6, 6), _f32(2, 2, 2, 2))),
    "conv1d": (lambda x, w: lax.conv_general_dilated(x, w, (2,), "SAME"),
               (_f32(3, 2, 11), _f32(4, 2, 3))),
    "conv_grads": (lambda x, w: jax.grad(lambda a, b: (_conv((2, 2), ((1, 1), (1, 1)))(a, b)
                                                       ** 2).sum(), (0, 1))(x, w),
                   (_f32(2, 3, 7, 7), _f32(4, 3, 3, 3))),
    "max_pool": (_pool, (_f32(2, 3, 6, 6),)),
    "max_pool_grad": (jax.grad(lambda x: (_pool(x) ** 2).sum()), (_f32(2, 3, 6, 6),)),
    "max_pool_ties": (jax.grad(lambda x: _pool(x).sum()), (np.ones((1, 1, 4, 4), np.float32),)),
    "avg_pool": (_avg, (_f32(2, 2, 5, 5),)),
    "scatter_add": (lambda x, i, u: x.at[i].add(u),
                    (_f32(6, 3), np.array([0, 2, 2, 5, 0], np.int32), _f32(5, 3))),
    "scatter_set": (lambda x, i, u: x.at[i].set(u),
                    (_f32(6, 3), np.array([1, 4], np.int32), _f32(2, 3))),
    "scatter_out_of_range": (lambda x, i, u: x.at[i].add(u, mode="drop"),
                             (_f32(4), np.array([1, 7, -9], np.int32), _f32(3))),
    "scatter_clip": (lambda x, i, u: x.at[i].set(u, mode="clip"),
                     (_f32(4), np.array([1, 7], np.int32), _f32(2))),
    "embedding_grad": (jax.grad(lambda w, i: (w[i] ** 2).sum()),
                       (_f32(10, 4), np.array([[1, 3], [3, 9]], np.int32))),
    "scatter_max": (lambda x, i, u: x.at[i].max(u),
                    (_f32(5), np.array([0, 0, 3], np.int32), _f32(3))),
    "dot_batched": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), (_f32(3, 4, 5), _f32(3, 5, 2))),
    "dot_odd_dims": (lambda a, b: lax.dot_general(a, b, (((0, 2), (1, 0)), ((1,), (2,)))),
                     (_f32(3, 4, 5), _f32(5, 3, 4, 2))),
    "dot_int": (lambda a, b: a @ b, (np.arange(6, dtype=np.int32).reshape(2, 3),
                                     np.arange(12, dtype=np.int32).reshape(3, 4))),
    "gelu_erf": (lambda x: jax.nn.gelu(x, approximate=False), (_f32(50),)),
    "erf_inv": (jax.scipy.special.erfinv, (np.linspace(-0.99, 0.99, 33).astype(np.float32),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_xla(name):
    fn, args = CASES[name]
    closed = jax.make_jaxpr(fn)(*args)
    assert _numpy_eval.covers(closed.jaxpr), name
    with np.errstate(all="ignore"):
        got = _numpy_eval.evaluate(closed.jaxpr, closed.consts, list(args))
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g, dtype=w.dtype)
        assert g.shape == w.shape
        np.testing.assert_allclose(g, np.asarray(w), rtol=2e-5, atol=2e-5)


def test_unhandled_forms_are_not_covered():
    # batch groups (a grouped convolution's weight gradient) have no rule: compiled instead
    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2)
    closed = jax.make_jaxpr(f)(_f32(4, 2, 5, 5), _f32(4, 2, 3, 3))
    with pytest.raises(_numpy_eval.NoRule, match="batch groups"):
        _numpy_eval.evaluate(closed.jaxpr, closed.consts, [_f32(4, 2, 5, 5), _f32(4, 2, 3, 3)])
    # a gather over many indices loops in Python per index: left to XLA
    big = jax.make_jaxpr(lambda x, i: x[i])(_f32(10), np.zeros(1 << 15, np.int32))
    assert not _numpy_eval.covers(big.jaxpr)


def test_scatter_with_batching_dims():
    # take_along_axis's backward scatters with operand batching dimensions
    def f(x, i):
        return jax.grad(lambda a: (jnp.take_along_axis(a, i, axis=1) ** 2).sum())(x)
    x, i = _f32(3, 5), np.array([[0, 4], [2, 2], [1, 3]], np.int32)
    closed = jax.make_jaxpr(f)(x, i)
    got = _numpy_eval.evaluate(closed.jaxpr, closed.consts, [x, i])
    np.testing.assert_allclose(got[0], np.asarray(jax.jit(f)(x, i)), rtol=1e-6)


def test_total_order_of_floats():
    # lax compares and sorts floats in a total order: -NaN < -inf < -0 < +0 < inf < NaN
    x = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, -np.nan, -1.0, 0.0, -0.0],
                 np.float32)
    for fn in (lambda a: jnp.sort(a), lambda a: jnp.argsort(a, stable=True),
               lambda a: jnp.searchsorted(jnp.sort(a), a),
               lambda a: jax.lax.sort((a, jnp.arange(a.size)), num_keys=1)[1]):
        closed = jax.make_jaxpr(fn)(x)
        got = _numpy_eval.evaluate(closed.jaxpr, closed.consts, [x])[0]
        want = np.asarray(jax.jit(fn)(x))
        assert np.array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8)), (got, want)


def test_float32_erf_is_within_two_ulp_of_the_exact_one():
    import math
    x = np.concatenate([np.linspace(-6, 6, 200_001), [0.0, -0.0, 1e-30, -1e-30, 3.9, 4.1]]
                       ).astype(np.float32)
    got = _numpy_eval._RULES["erf"](x)
    assert got.dtype == np.float32
    exact = np.array([math.erf(float(v)) for v in x])
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - exact) / ulp).max() <= 2.0
    assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    special = _numpy_eval._RULES["erf"](np.array([np.inf, -np.inf, np.nan], np.float32))
    assert special[0] == 1 and special[1] == -1 and np.isnan(special[2])


def test_gelu_on_the_host_tier_imports_no_scipy(tmp_path):
    import subprocess
    import sys
    code = ("import sys, torchjax as torch\n"
            "x = torch.linspace(-3, 3, 64)\n"
            "y = torch.nn.functional.gelu(x)\n"
            "assert torch.compile_stats().host_calls >= 1, torch.compile_stats()\n"
            "print('scipy.special' in sys.modules)\n")
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("TORCHJAX_HOST_TIER", "TORCHJAX_CACHE")}
    env["TORCHJAX_CACHE_DIR"] = str(tmp_path)  # (new programs: the host tier takes them)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("exponent", [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 2.5, -0.5])
def test_pow_by_a_number_matches_numpy_power(exponent):
    """x ** 3.0 (a GPT's GELU) is evaluated by products (NumPy's float power costs ~45 ns
    an element whatever the exponent); the values stay power's, special values included."""
    from torchjax import _numpy_eval
    x = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.5, 7.0, np.inf, -np.inf, np.nan], np.float32)
    y = np.float32(exponent)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
        got = _numpy_eval._RULES["pow"](x, y)
        wide = _numpy_eval._RULES["pow"](x, np.broadcast_to(y, x.shape))
        ints = _numpy_eval._RULES["integer_pow"](x, y=int(exponent)) \
            if exponent == int(exponent) else want
    assert got.dtype == want.dtype
    for a in (got, wide, ints):
        np.testing.assert_allclose(a, want, rtol=1e-6, equal_nan=True)
        # (the sign of a zero result too)
        assert (np.signbit(a) == np.signbit(want))[want == 0].all()
