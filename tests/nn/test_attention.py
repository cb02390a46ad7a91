"""nn.MultiheadAttention, F.multi_head_attention_forward and F.scaled_dot_product_attention
against PyTorch with copied weights: outputs, attention weights, the gradients of the inputs
and of every parameter, parameter names, repr, initialisation, dropout statistics and errors.
(The row behind scaled_dot_product_attention is compared case by case in
tests/ops/samples_attention.py.)"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import torchjax

L, S, N, E, H = 3, 4, 2, 8, 2
_rng = np.random.default_rng(0)


def arr(*shape):
    return _rng.uniform(-1, 1, size=shape).astype(np.float32)


def pair(*args, **kwargs):
    """The same MultiheadAttention in both libraries with PyTorch's weights copied into ours."""
    tm = torch.nn.MultiheadAttention(*args, **kwargs)
    jm = torchjax.nn.MultiheadAttention(*args, **kwargs)
    jm.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})
    return tm, jm


def close(a, b, what, tol=2e-5):
    a, b = a.detach().numpy(), b.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


def tensors(lib, arrays, grad=True):
    return [None if a is None else lib.tensor(a).requires_grad_(grad and a.dtype == np.float32)
            for a in arrays]


def check_backward(tm, jm, t_outs, j_outs, t_ins, j_ins):
    """Backward with the same cotangents on every output; compare the gradients of the inputs
    and of every parameter."""
    cts = [arr(*b.shape) for b in t_outs]
    torch.autograd.backward(t_outs, [torch.tensor(c) for c in cts])
    torchjax.autograd.backward(j_outs, [torchjax.tensor(c) for c in cts])
    for i, (a, b) in enumerate(zip(j_ins, t_ins)):
        if b is not None and b.requires_grad:
            close(a.grad, b.grad, f"grad of input {i}")
    for (n, p), (_, q) in zip(jm.named_parameters(), tm.named_parameters()):
        close(p.grad, q.grad, f"grad of {n}")


def _bool(*shape, seed):
    m = np.random.default_rng(seed).random(shape) > 0.6
    m[..., 0] = False  # no fully masked row (PyTorch's need_weights path gives NaN there)
    return m


# (constructor kwargs, forward kwargs (arrays as numpy), self-attention, batched)
CASES = [
    (dict(), dict(attn_mask=_bool(L, S, seed=1), key_padding_mask=_bool(N, S, seed=2)),
     False, True),
    (dict(batch_first=True), dict(attn_mask=arr(N * H, L, S), average_attn_weights=False),
     False, True),
    (dict(kdim=5, vdim=6), dict(key_padding_mask=arr(N, S), need_weights=False), False, True),
    (dict(add_bias_kv=True, add_zero_attn=True),
     dict(attn_mask=_bool(L, S, seed=3), key_padding_mask=_bool(N, S, seed=4)), False, True),
    (dict(bias=False, batch_first=True),
     dict(attn_mask=np.triu(np.full((L, L), -np.inf, np.float32), 1), is_causal=True,
          need_weights=False), True, True),
    (dict(dropout=0.5), dict(key_padding_mask=_bool(S, seed=5), average_attn_weights=False),
     False, False),
]


@pytest.mark.parametrize("ctor, fwd, self_attn, batched", CASES)
def test_multihead_attention_matches_pytorch(ctor, fwd, self_attn, batched):
    tm, jm = pair(E, H, **ctor)
    tm.eval(), jm.eval()  # (the dropout case: dropout off in eval)
    bf = ctor.get("batch_first", False)

    def shape(n, e):
        return ((N, n, e) if bf else (n, N, e)) if batched else (n, e)

    q = arr(*shape(L, E))
    kv = [q, q] if self_attn else [arr(*shape(S, ctor.get("kdim", E))),
                                   arr(*shape(S, ctor.get("vdim", E)))]
    results = []
    for lib, m in ((torch, tm), (torchjax, jm)):
        ins = tensors(lib, [q, *kv])
        if self_attn:
            ins = [ins[0]] * 3  # query is key is value: the packed projection path
        kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in fwd.items()}
        out, weights = m(*ins, **kw)
        results.append((ins, out, weights))
    (t_ins, t_out, t_w), (j_ins, j_out, j_w) = results
    close(j_out, t_out, "output")
    assert (j_w is None) == (t_w is None)
    outs = ([t_out], [j_out])
    if t_w is not None:
        close(j_w, t_w, "attention weights")
        outs = ([t_out, t_w], [j_out, j_w])
    check_backward(tm, jm, *outs, t_ins[:1] if self_attn else t_ins,
                   j_ins[:1] if self_attn else j_ins)


@pytest.mark.parametrize("kwargs", [dict(), dict(kdim=5, vdim=6, bias=False),
                                    dict(add_bias_kv=True)])
def test_parameters_repr_and_init(kwargs):
    tm = torch.nn.MultiheadAttention(E, H, **kwargs)
    jm = torchjax.nn.MultiheadAttention(E, H, **kwargs)
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in jm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for (n, p), (_, q) in zip(jm.named_parameters(), tm.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), n
    if jm.in_proj_bias is not None:
        assert not jm.in_proj_bias.detach().numpy().any()
        assert not jm.out_proj.bias.detach().numpy().any()
    w = jm.in_proj_weight if jm.in_proj_weight is not None else jm.k_proj_weight
    bound = math.sqrt(6 / sum(w.shape))  # xavier_uniform_
    assert np.abs(w.detach().numpy()).max() <= bound
    assert jm.head_dim == tm.head_dim and jm._qkv_same_embed_dim == tm._qkv_same_embed_dim


def test_functional_with_static_key_value():
    """F.multi_head_attention_forward directly: separate projection weights, static_k/v."""
    q, k, v = arr(L, N, E), arr(S, N, 5), arr(S, N, 6)
    weights = [arr(E, E), arr(E, 5), arr(E, 6), arr(3 * E), arr(E, E), arr(E)]
    static = [arr(N * H, S + 1, E // H), arr(N * H, S + 1, E // H)]
    results = []
    for lib in (torch, torchjax):
        wq, wk, wv, b, wo, bo = tensors(lib, weights)
        sk, sv = tensors(lib, static)
        ins = tensors(lib, [q, k, v])
        out, attn = lib.nn.functional.multi_head_attention_forward(
            *ins, E, H, None, b, None, None, False, 0.0, wo, bo, training=False,
            use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk,
            v_proj_weight=wv, static_k=sk, static_v=sv)
        (out.sum() + attn.sum()).backward()
        results.append((out, attn, [wq, b, wo, bo, sk, sv, ins[0]]))
    (t_out, t_attn, t_leaves), (j_out, j_attn, j_leaves) = results
    close(j_out, t_out, "output")
    close(j_attn, t_attn, "weights")
    for i, (a, b) in enumerate(zip(j_leaves, t_leaves)):
        close(a.grad, b.grad, f"grad {i}")


def test_dropout_statistics():
    """Training-mode dropout on the attention weights: about p of them dropped, the rest
    scaled by 1 / (1 - p); eval mode drops nothing; the same seed gives the same draw."""
    p = 0.4
    m = torchjax.nn.MultiheadAttention(E, H, dropout=p)
    q, kv = torchjax.tensor(arr(L, N, E)), torchjax.tensor(arr(S, N, E))
    ref = m.eval()(q, kv, kv, average_attn_weights=False)[1].detach().numpy()
    m.train()
    w = np.stack([m(q, kv, kv, average_attn_weights=False)[1].detach().numpy()
                  for _ in range(20)])
    dropped = w == 0
    assert abs(dropped.mean() - p) < 0.08
    np.testing.assert_allclose(w[~dropped], (np.broadcast_to(ref, w.shape) / (1 - p))[~dropped],
                               rtol=1e-5)
    # scaled_dot_product_attention: uniform weights over ones keep the mean output at 1
    z = torchjax.zeros(1, 1, 400, 50)
    torchjax.manual_seed(3)
    out = torchjax.nn.functional.scaled_dot_product_attention(z, z, z + 1, dropout_p=p)
    assert abs(float(out.mean()) - 1) < 0.02
    torchjax.manual_seed(3)
    again = torchjax.nn.functional.scaled_dot_product_attention(z, z, z + 1, dropout_p=p)
    assert bool((again == out).all())


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return None


ERRORS = [
    lambda lib: lib.nn.MultiheadAttention(0, 2),
    lambda lib: lib.nn.MultiheadAttention(E, 3),
    lambda lib: lib.nn.MultiheadAttention(E, H)(*[lib.zeros(1, L, N, E)] * 3),
    lambda lib: lib.nn.MultiheadAttention(E, H)(lib.zeros(L, N, E), lib.zeros(S, E),
                                                lib.zeros(S, E)),
    lambda lib: lib.nn.MultiheadAttention(E, H)(*[lib.zeros(L, N, E)] * 3, is_causal=True),
    lambda lib: lib.nn.MultiheadAttention(E, H)(*[lib.zeros(L, N, E)] * 3,
                                                attn_mask=lib.zeros(L, L + 1)),
    lambda lib: lib.nn.MultiheadAttention(E, H)(*[lib.zeros(L, N, E)] * 3,
                                                attn_mask=lib.zeros(L, L, dtype=lib.int64)),
    lambda lib: lib.nn.MultiheadAttention(E, H)(*[lib.zeros(L, N, E)] * 3,
                                                key_padding_mask=lib.zeros(N + 1, L)),
    lambda lib: lib.nn.MultiheadAttention(E, H)(lib.zeros(L, N, E), lib.zeros(S, N, E),
                                                lib.zeros(S + 1, N, E)),
    lambda lib: lib.nn.MultiheadAttention(E, H)(*[lib.zeros(L, N, E + 1)] * 3),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_pytorch(case):
    got, want = _error(lambda: ERRORS[case](torchjax)), _error(lambda: ERRORS[case](torch))
    assert want is not None and got == want


def test_mismatched_mask_types_warn():
    def run(lib):
        m = lib.nn.MultiheadAttention(E, H)
        x = lib.zeros(L, N, E)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            m(x, x, x, attn_mask=lib.zeros(L, L), key_padding_mask=lib.zeros(N, L).bool())
        return [str(w.message) for w in ws]
    assert run(torchjax) == run(torch) != []
