"""Embedding and EmbeddingBag layers against PyTorch: lookups, gradients (padding_idx,
max_norm renormalisation in place), from_pretrained, state_dict, repr and error messages."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)


def _pair(name, *args, **kwargs):
    tm = getattr(torch.nn, name)(*args, **kwargs)
    jm = getattr(torchjax.nn, name)(*args, **kwargs)
    jm.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    return tm, jm


def _close(a, b, what, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol,
                               err_msg=what)


def _run(tm, jm, *inputs, **kwargs):
    """Forward with the same inputs, backward with the same cotangent; compare all."""
    ins_t = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
    ins_j = [torchjax.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
    yt, yj = tm(*ins_t, **kwargs), jm(*ins_j, **kwargs)
    _close(yj, yt, "output")
    assert type(yj.grad_fn).__name__ == type(yt.grad_fn).__name__
    ct = _rng.normal(size=tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(ct)).sum().backward()
    (yj * torchjax.tensor(ct)).sum().backward()
    if tm.weight.requires_grad:
        _close(jm.weight.grad, tm.weight.grad, "weight grad")
    _close(jm.weight, tm.weight, "weight after the call")
    return ins_t, ins_j


def _idx(*shape, high=10):
    return _rng.integers(0, high, size=shape)


@pytest.mark.parametrize("kwargs", [
    {},
    {"padding_idx": 3},
    {"padding_idx": -2, "scale_grad_by_freq": True},
    {"max_norm": 1.0},
    {"max_norm": 2.0, "norm_type": 1.0},
])
def test_embedding_matches_pytorch(kwargs):
    tm, jm = _pair("Embedding", 10, 4, **kwargs)
    idx = np.array([[1, 3, 8, 3], [0, 8, 2, 1]])
    _run(tm, jm, idx)
    if "padding_idx" in kwargs:
        row = jm.padding_idx
        assert not jm.weight.grad.numpy()[row].any()


def test_embedding_init_zeroes_the_padding_row():
    m = torchjax.nn.Embedding(5, 3, padding_idx=1)
    assert not m.weight.detach().numpy()[1].any() and m.weight.detach().numpy().std() > 0.1


def test_max_norm_renormalises_rows_in_place():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], np.float32)
    out = {}
    for lib in (torch, torchjax):
        weight = lib.tensor(w)
        lib.nn.functional.embedding(lib.tensor([0, 1]), weight, max_norm=1.0)
        out[lib] = weight
    _close(out[torchjax], out[torch], "renormalised weight")
    np.testing.assert_allclose(out[torchjax].numpy()[2], w[2])  # not looked up: untouched


@pytest.mark.parametrize("freeze", [True, False])
def test_from_pretrained(freeze):
    w = _rng.normal(size=(6, 3)).astype(np.float32)
    for name in ("Embedding", "EmbeddingBag"):
        tm = getattr(torch.nn, name).from_pretrained(torch.tensor(w), freeze=freeze,
                                                     padding_idx=1)
        jm = getattr(torchjax.nn, name).from_pretrained(torchjax.tensor(w), freeze=freeze,
                                                        padding_idx=1)
        assert repr(jm) == repr(tm)
        assert jm.weight.requires_grad is (not freeze)
        _close(jm.weight, tm.weight, "weight")
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be "
                                             "2-dimensional"):
        torchjax.nn.Embedding.from_pretrained(torchjax.zeros(3))


@pytest.mark.parametrize("kwargs, inputs", [
    ({"mode": "sum"}, (_idx(7), np.array([0, 3, 3, 5]))),
    ({}, (_idx(2, 4),)),
    ({"mode": "max", "padding_idx": 2}, (np.array([2, 2, 1, 2, 5, 9]), np.array([0, 2, 5]))),
    ({"mode": "sum", "include_last_offset": True}, (_idx(6), np.array([0, 1, 4, 6]))),
    ({"mode": "mean", "max_norm": 1.0}, (_idx(2, 3),)),
])
def test_embedding_bag_matches_pytorch(kwargs, inputs):
    tm, jm = _pair("EmbeddingBag", 10, 3, **kwargs)
    _run(tm, jm, *inputs)


def test_embedding_bag_per_sample_weights_gradient():
    tm, jm = _pair("EmbeddingBag", 10, 3, mode="sum")
    psw = _rng.normal(size=6).astype(np.float32)
    pt, pj = torch.tensor(psw, requires_grad=True), torchjax.tensor(psw, requires_grad=True)
    idx, off = _idx(6), np.array([0, 2])
    yt = tm(torch.tensor(idx), torch.tensor(off), per_sample_weights=pt)
    yj = jm(torchjax.tensor(idx), torchjax.tensor(off), per_sample_weights=pj)
    _close(yj, yt, "output")
    yt.pow(2).sum().backward()
    yj.pow(2).sum().backward()
    _close(pj.grad, pt.grad, "per_sample_weights grad", 1e-4)
    _close(jm.weight.grad, tm.weight.grad, "weight grad", 1e-4)


def _same_error(f):
    with pytest.raises(Exception) as want:
        f(torch)
    first = str(want.value).splitlines()[0]
    with pytest.raises(type(want.value), match=re.escape(first)):
        f(torchjax)


W = np.zeros((5, 3), np.float32)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.embedding(lib.tensor([1, 5]), lib.tensor(W)),
    lambda lib: lib.nn.functional.embedding(lib.tensor([-1]), lib.tensor(W)),
    lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]), lib.tensor(W)),
    lambda lib: lib.nn.functional.embedding(lib.tensor([1]), lib.tensor(W), padding_idx=5),
    lambda lib: lib.nn.functional.embedding(lib.tensor([1]), lib.zeros(5)),
    lambda lib: lib.nn.Embedding(5, 3, _weight=lib.zeros(4, 3)),
    lambda lib: lib.nn.EmbeddingBag(5, 3, padding_idx=-6),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([1])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([0, 3])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 7]), lib.tensor(W),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, -1]), lib.tensor(W),
                                                lib.tensor([0]), mode="max"),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([0]), mode="min"),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([0]), mode="max",
                                                scale_grad_by_freq=True),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([0]), per_sample_weights=lib.ones(2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W), None),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.tensor(W),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([0]), padding_idx=5),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.zeros(5, 3).long(),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.tensor(W),
                                                lib.tensor([0]), mode="sum",
                                                per_sample_weights=lib.ones(2).double()),
])
def test_errors_match_pytorch(call):
    _same_error(call)


def test_unsupported_arguments_say_so():
    w = torchjax.zeros(5, 3)
    with pytest.raises(NotImplementedError, match=r"embedding\(sparse=True\)"):
        torchjax.nn.Embedding(5, 3, sparse=True)(torchjax.tensor([1]))
    with pytest.raises(NotImplementedError, match="include_last_offset=True"):
        torchjax.nn.functional.embedding_bag(torchjax.tensor([1, 2, 3]), w,
                                             torchjax.tensor([0, 2]), mode="max",
                                             include_last_offset=True)
