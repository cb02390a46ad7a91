"""torch.embedding_bag, ATen's form: its four results (the bags' values, offset2bag, bag_size,
max_indices) and the weight's gradient, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

from ._same_error import raises_as_pytorch

_W = np.arange(12.0).reshape(6, 2)
_W[3] = [100.0, -5.0]  # a row that is the maximum of one column only
_I = [1, 2, 4, 5, 4, 3, 2, 2]
_O = [0, 3, 3, 6]  # an empty bag, and a last bag of padding only when padding_idx=2


def _run(lib, dtype, args):
    w = lib.tensor(_W, dtype=getattr(lib, dtype), requires_grad=True)
    i = lib.tensor(_I)
    # include_last_offset: the last offset closes the last bag (PyTorch's mean and max count
    # indices past it, which torchjax refuses)
    o = lib.tensor(_O + [len(_I)] if args[4:5] == (True,) else _O)
    out = lib.embedding_bag(w, i, o, *args)
    out[0].backward(lib.arange(float(out[0].numel())).reshape(out[0].shape).to(out[0].dtype))
    return ([str(t.dtype) for t in out], type(out[0].grad_fn).__name__,
            [t.detach().double().numpy() for t in out], w.grad.double().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("args", [
    (), (False, 0), (False, 1), (False, 2), (True, 1),
    (False, 0, False, None, False, 2), (False, 1, False, None, False, 2),
    (False, 2, False, None, False, 4), (False, 0, False, None, False, -1),
    (False, 1, False, None, True), (False, 2, False, None, True),
], ids=str)
def test_against_pytorch(dtype, args):
    ours, theirs = _run(torchjax, dtype, args), _run(torch, dtype, args)
    assert [d.replace("torchjax", "torch") for d in ours[0]] == theirs[0]
    assert ours[1] == theirs[1]
    for a, b in zip(ours[2], theirs[2]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)  # (a mean's float32 rounding may differ)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)


def test_per_sample_weights_and_int32_indices():
    psw = [0.5, 1, 2, -1, 3, 0.25, 1, 1]

    def run(lib):
        w = lib.tensor(_W, dtype=lib.float32, requires_grad=True)
        i, o = lib.tensor(_I, dtype=lib.int32), lib.tensor(_O, dtype=lib.int32)
        out = lib.embedding_bag(w, i, o, False, 0, False, lib.tensor(psw))
        out[0].sum().backward()
        return [(str(t.dtype)[-5:], t.detach().numpy().tolist()) for t in out], \
            w.grad.numpy().tolist()
    assert run(torchjax) == run(torch)


def test_errors():
    raises_as_pytorch(lambda t: t.embedding_bag(t.ones(3, 2), t.tensor([0]), t.tensor([0]),
                                                False, 3),
                      RuntimeError, "`mode` must be sum, mean, or max.")
    raises_as_pytorch(lambda t: t.embedding_bag(t.ones(3, 2), t.tensor([[0]]), None),
                      TypeError, "argument 'offsets' (position 3) must be Tensor, not NoneType")
