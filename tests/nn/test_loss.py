"""Every loss module of torch.nn against PyTorch 2.13: the same module and inputs in both
libraries, for each reduction: values, grad_fn names, gradients, repr and buffers; then the
deprecated arguments, warnings and PyTorch's error messages. (The functional rows are checked
value by value in tests/ops/samples_loss.py.)"""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)


def _f(*shape, low=-2.0, high=2.0):
    return _rng.uniform(low, high, size=shape).astype(np.float32)


def _probs(*shape):
    p = _f(*shape, low=0.1, high=1)
    return p / p.sum(axis=1, keepdims=True)


def _signs(*shape):
    return np.where(_rng.random(shape) > 0.5, 1, -1).astype(np.float32)


def _log_probs(*shape):
    x = _f(*shape)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


W3 = np.array([0.5, 1.5, 2.0], np.float32)
IDX6 = np.array([0, 2, 1, 1, 0, 2])
_REG = lambda: ([_f(4, 3), _f(4, 3)], [True, True])  # noqa: E731

# (module, constructor arguments, inputs, which inputs require grad)
CASES = [
    ("L1Loss", {}, *_REG()),
    ("MSELoss", {}, *_REG()),
    ("SmoothL1Loss", {"beta": 0.5}, *_REG()),
    ("HuberLoss", {"delta": 0.5}, *_REG()),
    ("CrossEntropyLoss", {"weight": W3, "ignore_index": 1, "label_smoothing": 0.1},
     [_f(6, 3), IDX6], [True, False]),
    ("CrossEntropyLoss", {}, [_f(2, 3, 2, 2), IDX6[:4].reshape(2, 1, 2)[:, [0, 0]]],
     [True, False]),
    ("CrossEntropyLoss", {"label_smoothing": 0.2}, [_f(4, 3), _probs(4, 3)], [True, True]),
    ("NLLLoss", {"weight": W3}, [_log_probs(6, 3), IDX6], [True, False]),
    ("NLLLoss", {"ignore_index": 0}, [_log_probs(2, 3, 4).transpose(0, 2, 1).copy(),
                                      IDX6[:4].reshape(2, 2)[:, [0, 1, 1]]], [True, False]),
    ("BCELoss", {"weight": W3}, [_f(4, 3, low=0.05, high=0.95), _f(4, 3, low=0, high=1)],
     [True, True]),
    ("BCEWithLogitsLoss", {"pos_weight": W3}, [_f(4, 3), _f(4, 3, low=0, high=1)],
     [True, True]),
    ("KLDivLoss", {"log_target": True}, [_log_probs(4, 3), _log_probs(4, 3)], [True, True]),
    ("CosineEmbeddingLoss", {"margin": 0.2}, [_f(4, 3), _f(4, 3), _signs(4)],
     [True, True, False]),
    ("MarginRankingLoss", {"margin": 0.1}, [_f(5), _f(5), _signs(5)], [True, True, True]),
    ("TripletMarginLoss", {"p": 1, "swap": True}, [_f(4, 3), _f(4, 3), _f(4, 3)],
     [True, True, True]),
    ("TripletMarginWithDistanceLoss", {"swap": True}, [_f(4, 3), _f(4, 3), _f(4, 3)],
     [True, True, True]),
    ("CTCLoss", {"blank": 3, "zero_infinity": True},
     [_log_probs(5, 2, 4), np.array([[1, 2, 2], [0, 1, 0]]), np.array([5, 2]),
      np.array([3, 2])], [True, False, False, False]),
    ("PoissonNLLLoss", {"full": True}, [_f(4, 3), _f(4, 3, low=0, high=4)], [True, True]),
    ("GaussianNLLLoss", {"full": True}, [_f(4, 3), _f(4, 3), _f(4, 1, low=0.1, high=2)],
     [True, True, True]),
    ("MultiLabelSoftMarginLoss", {"weight": W3}, [_f(4, 3), _signs(4, 3).clip(0, 1)],
     [True, True]),
    ("MultiLabelMarginLoss", {}, [_f(3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, -1],
                                                      [-1, 0, 1, 2]])], [True, False]),
    ("HingeEmbeddingLoss", {"margin": 0.5}, [_f(4, 3), _signs(4, 3)], [True, False]),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": W3}, [_f(4, 3), IDX6[:4]],
     [True, False]),
    ("SoftMarginLoss", {}, [_f(4, 3), _signs(4, 3)], [True, False]),
]


def _build(lib, name, kwargs, reduction):
    kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    return getattr(lib.nn, name)(reduction=reduction, **kw)


def _run(lib, module, arrays, grads):
    ts = [lib.tensor(a.copy()) for a in arrays]
    for t, g in zip(ts, grads):
        if g:
            t.requires_grad_(True)
    out = module(*ts)
    cot = np.random.default_rng(3).uniform(-1, 1, size=tuple(out.shape)).astype(np.float32)
    out.backward(lib.tensor(cot))
    return out, [t.grad for t in ts]


def _np(t):
    return None if t is None else np.asarray(t.detach().numpy())


@pytest.mark.parametrize("name, kwargs, arrays, grads", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_module_matches_pytorch(name, kwargs, arrays, grads):
    for reduction in ("none", "mean", "sum"):
        m_th, m_tj = _build(torch, name, kwargs, reduction), _build(torchjax, name, kwargs,
                                                                    reduction)
        assert repr(m_tj) == repr(m_th)
        assert list(m_tj.state_dict()) == list(m_th.state_dict())
        assert m_tj.reduction == m_th.reduction == reduction
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # KLDivLoss's note on reduction='mean'
            out_th, g_th = _run(torch, m_th, arrays, grads)
            out_tj, g_tj = _run(torchjax, m_tj, arrays, grads)
        what = f"{name} reduction={reduction}"
        assert tuple(out_tj.shape) == tuple(out_th.shape), what
        assert out_tj.dtype.name == str(out_th.dtype).split(".")[1], what
        assert out_tj.grad_fn.name() == out_th.grad_fn.name(), what
        np.testing.assert_allclose(_np(out_tj), _np(out_th), rtol=1e-5, atol=1e-5, err_msg=what)
        for a, b in zip(g_tj, g_th):
            if b is None:
                assert a is None or not np.any(_np(a)), what
            else:
                np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-5, err_msg=what)


def test_custom_distance_function():
    arrays = [_f(4, 3), _f(4, 3), _f(4, 3)]

    def loss(lib):
        m = lib.nn.TripletMarginWithDistanceLoss(
            distance_function=lambda a, b: (a - b).abs().sum(-1), margin=0.5, swap=True)
        return _run(lib, m, arrays, [True] * 3)

    (out_th, g_th), (out_tj, g_tj) = loss(torch), loss(torchjax)
    assert out_tj.grad_fn.name() == out_th.grad_fn.name() == "MeanBackward0"
    np.testing.assert_allclose(_np(out_tj), _np(out_th), rtol=1e-5)
    for a, b in zip(g_tj, g_th):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)


def test_deprecated_size_average_and_reduce():
    x, y = _f(4, 3), _f(4, 3)
    for sa, red in ((False, None), (None, False), (True, True)):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            m = torchjax.nn.MSELoss(size_average=sa, reduce=red)
        with pytest.warns(UserWarning, match="please use reduction="):
            got = torchjax.nn.functional.l1_loss(torchjax.tensor(x), torchjax.tensor(y),
                                                 size_average=sa, reduce=red)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert m.reduction == torch.nn.MSELoss(size_average=sa, reduce=red).reduction
            want = torch.nn.functional.l1_loss(torch.tensor(x), torch.tensor(y),
                                               size_average=sa, reduce=red)
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-6)


def test_weighted_regression_losses():
    x, y, w = _f(4, 3), _f(4, 3), _f(4, 3, low=0.1, high=2)
    for fname in ("mse_loss", "l1_loss", "huber_loss"):
        for reduction in ("none", "mean", "sum"):
            res = []
            for lib in (torch, torchjax):
                a, b = lib.tensor(x).requires_grad_(), lib.tensor(y).requires_grad_()
                wt = lib.tensor(w).requires_grad_(fname != "huber_loss")
                out = getattr(lib.nn.functional, fname)(a, b, reduction=reduction, weight=wt)
                out.sum().backward()
                res.append((out, a.grad, b.grad, wt.grad))
            (o_th, *g_th), (o_tj, *g_tj) = res
            assert o_tj.grad_fn.name() == o_th.grad_fn.name(), (fname, reduction)
            np.testing.assert_allclose(_np(o_tj), _np(o_th), rtol=1e-5, atol=1e-6)
            for a, b in zip(g_tj, g_th):
                np.testing.assert_allclose(_np(a) if b is not None else 0,
                                           _np(b) if b is not None else 0, rtol=1e-5, atol=1e-6)


def test_warnings():
    F = torchjax.nn.functional
    x = torchjax.ones(4, 3)
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[4, 1\]\)\) that "
                                         r"is different to the input size \(torch.Size\(\[4, 3\]"):
        F.mse_loss(x, torchjax.ones(4, 1))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, x)
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        torchjax.nn.NLLLoss2d()


# Mistakes that PyTorch rejects: each runs in both libraries; type and message must agree.
ERRORS = {
    "bce target size": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.rand(3, 1), lib.rand(3)),
    "bce input range": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.5, 1.5]), lib.tensor([0.5, 0.5])),
    "bce dtype": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.rand(3), lib.rand(3, dtype=lib.float64)),
    "bce weight": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.rand(4, 3), lib.rand(4, 3), lib.rand(2)),
    "bce weight grad": lambda lib: lib.nn.functional.binary_cross_entropy(
        lib.rand(4, 3), lib.rand(4, 3), lib.rand(3, requires_grad=True)),
    "bce logits size": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.rand(4, 3), lib.rand(4, 1)),
    "bce logits pos_weight": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.rand(4, 3), lib.rand(4, 3), pos_weight=lib.rand(2)),
    "ce batch": lambda lib: lib.nn.functional.cross_entropy(
        lib.rand(4, 3), lib.tensor([0, 1, 2])),
    "ce class index": lambda lib: lib.nn.functional.cross_entropy(
        lib.rand(4, 3), lib.tensor([0, 5, 1, 1])),
    "nll negative index": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(4, 3), lib.tensor([0, -1, 1, 1])),
    "nll 2d index": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(2, 3, 2, 2), lib.full((2, 2, 2), 3)),
    "nll reduction": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(4, 3), lib.tensor([0, 1, 1, 1]), reduction="avg"),
    "nll 0-d": lambda lib: lib.nn.functional.nll_loss(lib.tensor(1.0), lib.tensor(0)),
    "nll weight": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(4, 3), lib.tensor([0, 1, 1, 1]), lib.ones(2)),
    "nll weight grad": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(4, 3), lib.tensor([0, 1, 1, 1]), lib.ones(3, requires_grad=True)),
    "nll target dtype": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(4, 3), lib.tensor([0.0, 1, 1, 1])),
    "nll multi-target": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(4, 3), lib.zeros(4, 1, dtype=lib.long)),
    "nll spatial": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(2, 3, 4, 4), lib.zeros(2, 4, 5, dtype=lib.long)),
    "nll 3d target": lambda lib: lib.nn.functional.nll_loss(
        lib.rand(2, 3, 4), lib.zeros(2, 5, dtype=lib.long)),
    "nll 1d target": lambda lib: lib.nn.functional.nll_loss(lib.rand(3), lib.tensor([1, 2])),
    "ce smoothing": lambda lib: lib.nn.functional.cross_entropy(
        lib.rand(4, 3), lib.tensor([0, 1, 1, 1]), label_smoothing=1.5),
    "ce probs dtype": lambda lib: lib.nn.functional.cross_entropy(
        lib.rand(4, 3), lib.ones(4, 3, dtype=lib.long)),
    "ce probs ignore_index": lambda lib: lib.nn.functional.cross_entropy(
        lib.rand(4, 3), lib.rand(4, 3), ignore_index=1),
    "ce probs weight": lambda lib: lib.nn.functional.cross_entropy(
        lib.rand(4, 3), lib.rand(4, 3), lib.ones(2)),
    "mse weight size": lambda lib: lib.nn.functional.mse_loss(
        lib.rand(4, 3), lib.rand(4, 3), weight=lib.ones(3)),
    "mse weighted reduction": lambda lib: lib.nn.functional.mse_loss(
        lib.rand(4, 3), lib.rand(4, 3), weight=lib.ones(4, 3), reduction="avg"),
    "mse broadcast": lambda lib: lib.nn.functional.mse_loss(lib.rand(4, 3), lib.rand(4, 2)),
    "mse integers": lambda lib: lib.nn.functional.mse_loss(
        lib.ones(3, dtype=lib.long), lib.ones(3, dtype=lib.long)),
    "smooth_l1 beta": lambda lib: lib.nn.functional.smooth_l1_loss(
        lib.rand(3), lib.rand(3), beta=-1.0),
    "huber delta": lambda lib: lib.nn.functional.huber_loss(lib.rand(3), lib.rand(3), delta=0.0),
    "huber module delta": lambda lib: lib.nn.HuberLoss(delta="1"),
    "kl reduction": lambda lib: lib.nn.functional.kl_div(lib.rand(3), lib.rand(3),
                                                         reduction="x"),
    "kl integers": lambda lib: lib.nn.functional.kl_div(lib.rand(3),
                                                        lib.ones(3, dtype=lib.long)),
    "cosine target dims": lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.rand(4, 3), lib.rand(4, 3), lib.ones(4, 1)),
    "cosine 1d target": lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.rand(3), lib.rand(3), lib.ones(1)),
    "cosine target size": lambda lib: lib.nn.functional.cosine_embedding_loss(
        lib.rand(4, 3), lib.rand(4, 3), lib.ones(3)),
    "margin ranking dims": lambda lib: lib.nn.functional.margin_ranking_loss(
        lib.rand(4, 3), lib.rand(4, 3), lib.ones(4)),
    "triplet margin": lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.rand(4, 3), lib.rand(4, 3), lib.rand(4, 3), margin=0),
    "triplet dims": lambda lib: lib.nn.functional.triplet_margin_loss(
        lib.rand(4, 3), lib.rand(3), lib.rand(4, 3)),
    "triplet module margin": lambda lib: lib.nn.TripletMarginLoss(margin=-1.0),
    "triplet distance reduction": lambda lib: (
        lib.nn.functional.triplet_margin_with_distance_loss(
            lib.rand(4, 3), lib.rand(4, 3), lib.rand(4, 3), reduction="x")),
    "gaussian negative var": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.rand(4, 3), lib.rand(4, 3), -lib.ones(4, 3)),
    "gaussian var size": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.rand(4, 3), lib.rand(4, 3), lib.ones(4, 2)),
    "gaussian reduction": lambda lib: lib.nn.functional.gaussian_nll_loss(
        lib.rand(4, 3), lib.rand(4, 3), lib.ones(4, 3), reduction="x"),
    "poisson reduction": lambda lib: lib.nn.functional.poisson_nll_loss(
        lib.rand(3), lib.rand(3), reduction="x"),
    "multilabel soft reduction": lambda lib: lib.nn.functional.multilabel_soft_margin_loss(
        lib.rand(4, 3), lib.rand(4, 3), reduction="x"),
    "multilabel target size": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.rand(4, 3), lib.zeros(4, 2, dtype=lib.long)),
    "multilabel target range": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.rand(1, 3), lib.tensor([[0, -1, 7]])),
    "multilabel input dims": lambda lib: lib.nn.functional.multilabel_margin_loss(
        lib.rand(1, 4, 3), lib.zeros(1, 4, 3, dtype=lib.long)),
    "multi margin p": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.rand(4, 3), lib.zeros(4, dtype=lib.long), p=3),
    "multi margin weight": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.rand(4, 3), lib.zeros(4, dtype=lib.long), weight=lib.ones(2)),
    "multi margin target": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.rand(4, 3), lib.zeros(3, dtype=lib.long)),
    "multi margin range": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.rand(4, 3), lib.full((4,), 3)),
    "multi margin module weight": lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(3, 1)),
    "soft margin target grad": lambda lib: lib.nn.functional.soft_margin_loss(
        lib.rand(3), lib.ones(3, requires_grad=True)),
    "ctc blank": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(2, 3, dtype=lib.long), (6, 5), (3, 2), blank=4),
    "ctc input length": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(2, 3, dtype=lib.long), lib.tensor([7, 5]),
        lib.tensor([3, 2])),
    "ctc target length": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(2, 3, dtype=lib.long), lib.tensor([6, 5]),
        lib.tensor([4, 2])),
    "ctc concatenated size": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(4, dtype=lib.long), lib.tensor([6, 5]),
        lib.tensor([3, 2])),
    "ctc lengths batch": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(2, 3, dtype=lib.long), lib.tensor([6]),
        lib.tensor([3, 2])),
    "ctc float lengths": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(2, 3, dtype=lib.long), lib.tensor([6.0, 5.0]),
        lib.tensor([3, 2])),
    "ctc negative length": lambda lib: lib.nn.functional.ctc_loss(
        lib.rand(6, 2, 4), lib.ones(2, 3, dtype=lib.long), lib.tensor([-1, 5]),
        lib.tensor([3, 2])),
}


def _error(f, lib):
    try:
        f(lib)
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return type(e).__name__, str(e).splitlines()[0]
    return "no error", ""


@pytest.mark.filterwarnings("ignore::UserWarning")   # mse's target size, kl_div's 'mean'
@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_pytorch(case):
    want = _error(ERRORS[case], torch)
    assert want[0] != "no error"
    assert _error(ERRORS[case], torchjax) == want


def test_concrete_checks_are_skipped_while_tracing():
    """Under jax.jit the class indices and lengths are not known: the losses still trace."""
    F = torchjax.nn.functional
    wrap = torchjax.Tensor._wrap
    x, t = _f(4, 3), np.array([0, 2, 1, 1])
    # int64 targets need x64 on for the jit's trace (torchjax follows that jit's setting)
    with jax.enable_x64(True):
        ce = jax.jit(lambda a, b: F.cross_entropy(wrap(a), wrap(b))._data)(x, t)
    np.testing.assert_allclose(
        ce, torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-6)
    lp, tg = _log_probs(5, 2, 4), np.array([1, 2, 2, 3, 1])
    lens = (np.array([5, 4]), np.array([3, 2]))
    ctc = jax.jit(lambda a, b, il, tl: F.ctc_loss(wrap(a), wrap(b), wrap(il), wrap(tl))._data)
    want = torch.nn.functional.ctc_loss(torch.tensor(lp), torch.tensor(tg),
                                        *map(torch.tensor, lens))
    with jax.enable_x64(True):
        np.testing.assert_allclose(ctc(lp, tg, *lens), want.item(), rtol=1e-5)
