"""Deferred pieces of split, chunk and unbind (_deferred_split.py) give PyTorch's values,
gradients and view semantics: read before or after the sequence runs, written in place,
read after a backward that ran the step as one program (_deferred_backward.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from tests.test_deferred_backward import deferred_grad_on  # noqa: F401 (autouse: deferral on)
from torchjax import _deferred_split

RNG = np.random.default_rng(2203)
E = RNG.standard_normal((6, 4)).astype(np.float32)
W = RNG.standard_normal((4, 8)).astype(np.float32) * 0.5


def _pending(t):
    return t._lazy is not None


SPLITS = [lambda t: t.split(1), lambda t: t.split([2, 1, 3]), lambda t: t.chunk(3),
          lambda t: t.unbind(0), lambda t: torch_like_split(t)]


def torch_like_split(t):
    return t.split(2, dim=1)


@pytest.mark.parametrize("cut", range(len(SPLITS)))
def test_pieces_train_like_pytorch(cut):
    """A small net over the pieces: losses, gradients and the pieces read after the
    backward (the step's list still holds them) equal PyTorch's, step after step."""
    def run(lib):
        e = lib.tensor(E, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        opt = lib.optim.SGD([e, w], lr=0.1)
        out = []
        for _ in range(5):
            opt.zero_grad()
            pieces = SPLITS[cut](e)  # (a concrete input: a pending one is not deferred)
            acc = None
            for p in pieces:
                h = lib.tanh(p.reshape(1, -1).sum(1, keepdim=True) * w[0, :1] + p.sum())
                acc = h if acc is None else acc + h
            loss = acc.sum()
            loss.backward()
            out.append([loss.item(), e.grad.numpy().copy(), w.grad.numpy().copy()]
                       + [p.detach().numpy().copy() for p in pieces])
            opt.step()
        return out
    before = _deferred_split.STATS["deferred"]
    got = run(torchjax)
    assert _deferred_split.STATS["deferred"] > before
    for g_row, r_row in zip(got, run(torch)):
        assert len(g_row) == len(r_row)
        for g, r in zip(g_row, r_row):
            np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)


def test_pieces_left_for_their_first_read_come_all_at_once():
    e = torchjax.tensor(E, requires_grad=True)
    for step in range(4):  # (a kind of call's first call runs eagerly)
        e.grad = None
        pieces = e.split(2)
        loss = (pieces[0] * 2).sum()
        assert _pending(pieces[1]) or step == 0
        later = _deferred_split.STATS["later"]
        loss.backward()
    # the backward computed what it needed; pieces 1 and 2 wait for a read, then come
    # together from one call
    assert _pending(pieces[1]) and _pending(pieces[2])
    np.testing.assert_array_equal(pieces[2].detach().numpy(), E[4:])
    assert not _pending(pieces[1]) and _deferred_split.STATS["later"] == later + 1
    np.testing.assert_array_equal(pieces[1].detach().numpy(), E[2:4])
    np.testing.assert_allclose(e.grad.numpy()[:2], 2 * np.ones((2, 4)))


@pytest.mark.parametrize("after_run", [False, True])
def test_in_place_writes_through_pieces_and_base(after_run):
    """Pieces are views of their input, as eagerly: a write into a piece reaches the base
    and the other way round, read before or after the sequence ran."""
    def run(lib):
        with lib.no_grad():
            for _ in range(3):
                base = lib.tensor(E) * 1
                pieces = base.split(2)
                if after_run:
                    (pieces[0] + 1).sum().item()  # runs the sequence
                pieces[1].mul_(10)
                base[4, 0] = -7.0
                res = [base.numpy().copy()] + [p.numpy().copy() for p in pieces]
        return res
    for g, r in zip(run(torchjax), run(torch)):
        np.testing.assert_array_equal(g, r)


def test_errors_stay_pytorchs():
    for lib in (torch, torchjax):
        t = lib.tensor(E)
        for _ in range(3):
            with pytest.raises(RuntimeError):
                t.split([2, 2])  # sizes that do not sum to the dim
            with pytest.raises((RuntimeError, IndexError)):
                t.unbind(3)
