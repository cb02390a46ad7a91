"""A torchjax model exported to pure JAX (functionalize) trains under jax.jit + optax exactly
as torchjax's own optimizer trains it, and the result loads back into the module."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn
from torchjax.func import functionalize, load_params


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))


def _data():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((8, 5)).astype(np.float32), rng.integers(0, 3, 8))
            for _ in range(4)]


def test_optax_training_matches_torchjax_optimizer():
    data = _data()
    ref = _model()
    opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    for x, y in data:
        opt.zero_grad()
        F.cross_entropy(ref(torch.tensor(x)), torch.tensor(y)).backward()
        opt.step()

    model = _model()
    apply_fn, params, buffers = functionalize(model)
    tx = optax.adam(0.01)
    state = tx.init(params)

    @jax.jit
    def step(params, state, x, y):
        def loss(p):
            logits = apply_fn(p, buffers, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        g = jax.grad(loss)(params)
        updates, state = tx.update(g, state, params)
        return optax.apply_updates(params, updates), state

    for x, y in data:
        params, state = step(params, state, jnp.asarray(x), jnp.asarray(y))
    assert all(params[k].dtype == jnp.float32 for k in params)
    load_params(model, params)
    for (name, a), b in zip(model.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5,
                                   atol=2e-6, err_msg=name)


def test_vmap_buffers_and_keys():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
    apply_fn, params, buffers = functionalize(model, return_buffers=True)
    x = jnp.ones((6, 3), jnp.float32) * jnp.arange(6, dtype=jnp.float32)[:, None]
    with pytest.raises(RuntimeError, match="pass key="):
        apply_fn(params, buffers, x)
    out1, new_buffers = jax.jit(apply_fn)(params, buffers, x, key=jax.random.key(1))
    out2, _ = jax.jit(apply_fn)(params, buffers, x, key=jax.random.key(2))
    assert not np.array_equal(np.asarray(out1), np.asarray(out2))  # a new mask per key
    assert int(new_buffers["1.num_batches_tracked"]) == 1
    # under the user's jit with JAX's x64 off, the tensors keep their dtypes and JAX's own
    # defaults stay 32-bit
    assert new_buffers["1.num_batches_tracked"].dtype == np.int64
    assert out1.dtype == np.float32 and jnp.zeros(2).dtype == np.float32
    assert not np.allclose(np.asarray(new_buffers["1.running_mean"]), 0)
    # the module itself is untouched by the pure calls
    assert model[1].num_batches_tracked.item() == 0
    model.eval()
    apply_fn, params, buffers = functionalize(model)
    batched = jax.vmap(lambda row: apply_fn(params, buffers, row[None])[0])(x)
    with torch.no_grad():
        want = model(torch.tensor(np.asarray(x))).numpy()
    np.testing.assert_allclose(np.asarray(batched), want, rtol=1e-5, atol=1e-6)
