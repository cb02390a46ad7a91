"""nn.Transformer, TransformerEncoder/Decoder and their layers against PyTorch with copied
weights: outputs, the gradients of the inputs and of every parameter (dropout 0 in training
mode, and eval mode), state_dict keys, repr, masks and errors. Sizes are small: batch 2,
sequences of 3 and 4, d_model 8, 2 heads, one or two layers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax

N, S, T, D, H, FF = 2, 4, 3, 8, 2, 16
_rng = np.random.default_rng(0)


def arr(*shape):
    return _rng.uniform(-1, 1, size=shape).astype(np.float32)


def copy_weights(tm, jm):
    assert list(jm.state_dict()) == list(tm.state_dict())
    jm.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})


def build(kind, *args, **kwargs):
    """The same module in both libraries (args may name a module kind to build in each),
    with PyTorch's weights copied into ours and the same repr."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the enable_nested_tensor notice: tested below
        made = [getattr(lib.nn, kind)(*[a(lib) if callable(a) else a for a in args], **kwargs)
                for lib in (torch, torchjax)]
    tm, jm = made
    assert repr(jm) == repr(tm)
    copy_weights(tm, jm)
    return tm, jm


def close(a, b, what, tol=3e-5):
    a, b = a.detach().numpy(), b.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


def lib_value(lib, v):
    return lib.tensor(v) if isinstance(v, np.ndarray) else v


def compare(tm, jm, inputs, kwargs, train):
    """Forward both (inputs require grad), then backward with the same cotangent: output,
    input gradients and every parameter's gradient."""
    tm.train(train), jm.train(train)
    runs = []
    for lib, m in ((torch, tm), (torchjax, jm)):
        ins = [lib.tensor(a).requires_grad_() for a in inputs]
        out = m(*ins, **{k: lib_value(lib, v) for k, v in kwargs.items()})
        runs.append((ins, out))
    (t_ins, t_out), (j_ins, j_out) = runs
    close(j_out, t_out, "output")
    ct = arr(*t_out.shape)
    t_out.backward(torch.tensor(ct))
    j_out.backward(torchjax.tensor(ct))
    for i, (a, b) in enumerate(zip(j_ins, t_ins)):
        close(a.grad, b.grad, f"grad of input {i}")
    for (n, p), (_, q) in zip(jm.named_parameters(), tm.named_parameters()):
        close(p.grad, q.grad, f"grad of {n}")


def causal(n):
    return np.triu(np.full((n, n), -np.inf, np.float32), 1)


def padding(n, length, seed):
    m = np.random.default_rng(seed).random((n, length)) > 0.7
    m[:, 0] = False
    return m


def gelu_module(lib):
    return lib.nn.GELU()


ENCODER_CASES = [
    (dict(), dict(src_mask=causal(S), src_key_padding_mask=padding(N, S, 1)), False),
    (dict(activation="gelu", norm_first=True, batch_first=True),
     dict(src_key_padding_mask=padding(N, S, 2)), True),
    (dict(activation=gelu_module, bias=False, layer_norm_eps=1e-3),
     dict(src_mask=padding(S, S, 3), is_causal=False), True),
]


@pytest.mark.filterwarnings("ignore:Support for mismatched")  # a float mask with a bool one
@pytest.mark.parametrize("ctor, fwd, train", ENCODER_CASES)
def test_encoder_layer(ctor, fwd, train):
    ctor = dict(ctor)
    act = ctor.pop("activation", "relu")
    tm, jm = build("TransformerEncoderLayer", D, H, FF, 0.0, act, **ctor)
    src = arr(N, S, D) if ctor.get("batch_first") else arr(S, N, D)
    compare(tm, jm, [src], fwd, train)


def test_encoder_layer_unbatched():
    tm, jm = build("TransformerEncoderLayer", D, H, FF, 0.0)
    compare(tm, jm, [arr(S, D)], dict(src_key_padding_mask=padding(1, S, 4)[0]), False)


DECODER_CASES = [
    (dict(), dict(tgt_mask=causal(T), memory_key_padding_mask=padding(N, S, 5),
                  tgt_is_causal=True), True),
    (dict(norm_first=True, activation="gelu", batch_first=True),
     dict(memory_mask=padding(T, S, 6), tgt_key_padding_mask=padding(N, T, 7)), False),
]


@pytest.mark.parametrize("ctor, fwd, train", DECODER_CASES)
def test_decoder_layer(ctor, fwd, train):
    ctor = dict(ctor)
    act = ctor.pop("activation", "relu")
    tm, jm = build("TransformerDecoderLayer", D, H, FF, 0.0, act, **ctor)
    bf = ctor.get("batch_first", False)
    tgt, memory = (arr(N, T, D), arr(N, S, D)) if bf else (arr(T, N, D), arr(S, N, D))
    compare(tm, jm, [tgt, memory], fwd, train)


def test_encoder_stack_detects_causal_mask():
    """Two layers and a final norm; a mask equal to the causal mask is detected as causal."""
    def make(lib):
        return lib.nn.TransformerEncoderLayer(D, H, FF, 0.0, batch_first=True)
    tm, jm = build("TransformerEncoder", make, 2, enable_nested_tensor=False)
    assert jm.layers[1] is not jm.layers[0]
    src = arr(N, S, D)
    compare(tm, jm, [src], dict(mask=causal(S)), True)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first):
    tm, jm = build("Transformer", D, H, 1, 1, FF, 0.0, batch_first=batch_first)
    src, tgt = (arr(N, S, D), arr(N, T, D)) if batch_first else (arr(S, N, D), arr(T, N, D))
    mask = torchjax.nn.Transformer.generate_square_subsequent_mask(T)
    np.testing.assert_array_equal(mask.numpy(), causal(T))
    kwargs = dict(tgt_mask=causal(T), src_key_padding_mask=padding(N, S, 8),
                  memory_key_padding_mask=padding(N, S, 8))
    compare(tm, jm, [src, tgt], kwargs, not batch_first)


def test_transformer_eval_without_grad():
    """PyTorch's inference fast path (no grad, eval) computes the same math."""
    tm, jm = build("Transformer", D, H, 1, 1, FF, 0.1, activation="gelu", batch_first=True)
    tm.eval(), jm.eval()
    src, tgt = arr(N, S, D), arr(N, T, D)
    with torch.no_grad(), torchjax.no_grad():
        close(jm(torchjax.tensor(src), torchjax.tensor(tgt), tgt_is_causal=True,
                 tgt_mask=jm.generate_square_subsequent_mask(T)),
              tm(torch.tensor(src), torch.tensor(tgt), tgt_is_causal=True,
                 tgt_mask=tm.generate_square_subsequent_mask(T)), "output")


def test_training_dropout_is_random():
    m = torchjax.nn.TransformerEncoderLayer(D, H, FF, dropout=0.5)
    x = torchjax.tensor(arr(S, N, D))
    a, b = m(x), m(x)
    assert not bool((a == b).all())
    m.eval()
    assert bool((m(x) == m(x)).all())


def test_nested_tensor_warning_and_attributes():
    def run(lib):
        layer = lib.nn.TransformerEncoderLayer(D, H, FF, activation=lib.nn.functional.gelu)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            enc = lib.nn.TransformerEncoder(layer, 2)
        return ([str(w.message) for w in ws], enc.use_nested_tensor, enc.num_layers,
                layer.activation_relu_or_gelu)
    assert run(torchjax) == run(torch)


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return None


ERRORS = [
    lambda lib: lib.nn.TransformerEncoderLayer(D, H, activation="tanh"),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF)(lib.zeros(S, N, D), lib.zeros(T, N + 1, D)),
    lambda lib: lib.nn.Transformer(D, H, 1, 1, FF)(lib.zeros(S, N, D), lib.zeros(T, N, D + 1)),
    lambda lib: lib.nn.TransformerDecoderLayer(D, H, FF)(lib.zeros(T, N, D), lib.zeros(S, N, D),
                                                         memory_is_causal=True),
]


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_pytorch(case):
    got, want = _error(lambda: ERRORS[case](torchjax)), _error(lambda: ERRORS[case](torch))
    assert want is not None and got == want
