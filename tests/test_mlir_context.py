"""torchjax's program cache lowers in one kept MLIR context per thread (_mlir_context.py);
everything else keeps JAX's fresh context per lowering."""

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from torchjax import _mlir_context

pytestmark = pytest.mark.skipif(_mlir_context._mlir is None, reason="another jax")
X = jnp.ones(3)


def _lowered(k):
    # a new function each time: JAX keeps lowerings of a function it has lowered before
    return jax.jit(lambda v: v * k + 1).lower(X)


def test_kept_inside_shared_fresh_outside(monkeypatch):
    monkeypatch.setattr(_mlir_context._tls, "uses", _mlir_context.RESET_AFTER, raising=False)
    with _mlir_context.shared():
        a, b = _lowered(2.0), _lowered(3.0)
    outside = [_lowered(4.0), _lowered(5.0)]  # (kept alive: a context's address is not reused)
    with _mlir_context.shared():
        c = _lowered(6.0)
    ctx = [low.compiler_ir().context for low in (a, b, *outside, c)]
    assert ctx[0] is ctx[1] is ctx[4]  # one context for this thread's shared lowerings
    assert ctx[2] is not ctx[0] and ctx[3] is not ctx[0] and ctx[2] is not ctx[3]


def test_made_anew_after_reset_after(monkeypatch):
    monkeypatch.setattr(_mlir_context, "RESET_AFTER", 2)
    monkeypatch.setattr(_mlir_context._tls, "uses", 2, raising=False)
    with _mlir_context.shared():
        lows = [_lowered(float(k)) for k in range(3)]
    ctx = [low.compiler_ir().context for low in lows]
    assert ctx[0] is ctx[1] and ctx[2] is not ctx[0]


def test_each_thread_its_own_and_results_unchanged():
    seen = {}

    def lower(name, k):
        with _mlir_context.shared():
            low = _lowered(k)
            seen[name] = low
            seen[name + "_out"] = np.asarray(low.compile()(X))

    threads = [threading.Thread(target=lower, args=(n, 7.0)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["a"].compiler_ir().context is not seen["b"].compiler_ir().context
    np.testing.assert_array_equal(seen["a_out"], np.full(3, 8.0, np.float32))
    np.testing.assert_array_equal(seen["b_out"], seen["a_out"])
