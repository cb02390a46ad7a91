"""torch.layer_norm, torch.dropout, torch.kl_div and the other torch.X forms of layers and
losses (src/torchjax/_torch_nn_forms.py) against PyTorch 2.13: the same call in both
libraries, values and gradients in float64, the int reduction enum, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)


def _f(*shape, low=-2.0, high=2.0):
    return _rng.uniform(low, high, size=shape)


def _np(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def _flat(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _weights(shape):
    # a fixed weighting of the result, so that the gradients of normalisations (whose plain
    # sum is constant) are not zero
    return np.cos(np.arange(int(np.prod(shape)), dtype=np.float64) + 0.3).reshape(shape)


def _compare(fn, arrays, grad=None, rtol=1e-10, atol=1e-12):
    """fn(lib, *tensors) in torch and torchjax: results (and gradients of `grad`'s arrays, a
    tuple of positions, through the sum of the first result) equal."""
    grad = () if grad is None else grad
    outs = []
    for lib in (torch, torchjax):
        ts = [lib.tensor(a) if not isinstance(a, lib.Tensor) else a for a in arrays]
        for i in grad:
            ts[i].requires_grad_(True)
        res = fn(lib, *ts)
        grads = []
        if grad:
            first = _flat(res)[0]
            first.mul(lib.tensor(_weights(first.shape))).sum().backward()
            grads = [_np(ts[i].grad) for i in grad]
        outs.append(([_np(r) for r in _flat(res)], grads, [type(r) for r in _flat(res)]))
    (t_res, t_grads, t_types), (j_res, j_grads, j_types) = outs
    assert len(t_res) == len(j_res)
    for a, b in zip(t_res, j_res):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    for a, b in zip(t_grads, j_grads):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    return outs


W = _f(4)
X34 = _f(3, 4)
X243 = _f(2, 4, 3)

CASES = {
    "layer_norm": (lambda t, x, w, b: t.layer_norm(x, [4], w, b, 1e-5, True), [X34, W, _f(4)],
                   (0, 1, 2)),
    "layer_norm_default": (lambda t, x: t.layer_norm(x, (3, 4)), [_f(2, 3, 4)], (0,)),
    "group_norm": (lambda t, x, w, b: t.group_norm(x, 2, w, b, 1e-3, False), [X243, W, _f(4)],
                   (0, 1, 2)),
    "rms_norm": (lambda t, x, w: t.rms_norm(x, [4], w), [X34, W], (0, 1)),
    "rms_norm_eps": (lambda t, x: t.rms_norm(x, [4], None, 0.1), [X34], (0,)),
    "batch_norm_eval": (lambda t, x, w, b, m, v: t.batch_norm(x, w, b, m, v, False, 0.1, 1e-5,
                                                              True),
                        [X243, W, _f(4), _f(4), _f(4, low=0.5)], (0, 1, 2)),
    "batch_norm_train_nostats": (lambda t, x, w: t.batch_norm(x, w, None, None, None, True,
                                                              0.1, 1e-5, False),
                                 [X243, W], (0, 1)),
    "instance_norm": (lambda t, x, w, b: t.instance_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         True), [X243, W, _f(4)], (0, 1, 2)),
    "embedding": (lambda t, w, i: t.embedding(w, i), [_f(5, 3), np.array([[0, 4], [4, 2]])],
                  (0,)),
    "embedding_padding": (lambda t, w, i: t.embedding(w, i, 4), [_f(5, 3), np.array([0, 4, 4])],
                          (0,)),
    "embedding_negative": (lambda t, w, i: t.embedding(w, i, -2, True),
                           [_f(5, 3), np.array([0, 3, 3])], (0,)),
    "dropout_eval": (lambda t, x: t.dropout(x, 0.5, False), [X34], (0,)),
    "dropout_p0": (lambda t, x: t.dropout(x, 0.0, True), [X34], (0,)),
    "dropout_p1": (lambda t, x: t.dropout(x, 1.0, True), [X34], (0,)),
    "alpha_dropout_eval": (lambda t, x: t.alpha_dropout(x, 0.5, False), [X34], (0,)),
    "feature_dropout_p1": (lambda t, x: t.feature_dropout(x, 1.0, True), [X243], (0,)),
    "feature_alpha_dropout_eval": (lambda t, x: t.feature_alpha_dropout(x, 0.3, False), [X243],
                                   (0,)),
    "max_pool1d": (lambda t, x: t.max_pool1d(x, 2), [_f(2, 3, 7)], (0,)),
    "max_pool1d_stride": (lambda t, x: t.max_pool1d(x, 3, [2], 1, 1, True), [_f(2, 3, 7)],
                          (0,)),
    "max_pool2d": (lambda t, x: t.max_pool2d(x, [2, 3], [], 1), [_f(2, 3, 6, 7)], (0,)),
    "max_pool3d": (lambda t, x: t.max_pool3d(x, 2, 1, 0, 2), [_f(1, 2, 5, 5, 5)], (0,)),
    "max_pool1d_with_indices": (lambda t, x: t.max_pool1d_with_indices(x, 3, 2),
                                [_f(2, 3, 7)], (0,)),
    "avg_pool1d": (lambda t, x: t.avg_pool1d(x, 3, [], 1, True, False), [_f(2, 3, 7)], (0,)),
    "adaptive_avg_pool1d": (lambda t, x: t.adaptive_avg_pool1d(x, 3), [_f(2, 3, 7)], (0,)),
    "adaptive_max_pool1d": (lambda t, x: t.adaptive_max_pool1d(x, [3]), [_f(2, 3, 7)], (0,)),
    "bilinear": (lambda t, a, b, w, c: t.bilinear(a, b, w, c), [_f(2, 3), _f(2, 4), _f(5, 3, 4),
                                                              _f(5)], (0, 1, 2, 3)),
    "threshold_": (lambda t, x: t.threshold_(x * 1, 0.5, -3.0), [X34], (0,)),
    "ctc_loss": (lambda t, lp, tg: t.ctc_loss(lp.log_softmax(2), tg, [6, 5], [3, 2], 0, 1),
                 [_f(6, 2, 4), np.array([[1, 2, 3], [3, 1, 0]])], (0,)),
    "ctc_loss_sum_tensor_lengths": (
        lambda t, lp, tg: t.ctc_loss(lp.log_softmax(2), tg, t.tensor([6, 5]), t.tensor([3, 2]),
                                     0, 2, True),
        [_f(6, 2, 4), np.array([[1, 2, 3], [3, 1, 0]])], (0,)),
}

LOSSES = {
    "kl_div": (lambda t, x, y, r: t.kl_div(x, y, r), [X34, _f(3, 4, low=0.1, high=1)]),
    "kl_div_log_target": (lambda t, x, y, r: t.kl_div(x, y, r, log_target=True), [X34, _f(3, 4)]),
    "binary_cross_entropy_with_logits": (
        lambda t, x, y, w, pw, r: t.binary_cross_entropy_with_logits(x, y, w, pw, r),
        [X34, _f(3, 4, low=0, high=1), _f(3, 4, low=0, high=1), _f(4, low=0.5)]),
    "bce_with_logits_plain": (lambda t, x, y, r: t.binary_cross_entropy_with_logits(
        x, y, reduction=r), [X34, _f(3, 4, low=0, high=1)]),
    "cosine_embedding_loss": (lambda t, a, b, y, r: t.cosine_embedding_loss(a, b, y, 0.2, r),
                              [X34, _f(3, 4), np.array([1.0, -1.0, -1.0])]),
    "hinge_embedding_loss": (lambda t, x, y, r: t.hinge_embedding_loss(x, y, 0.7, r),
                             [X34, np.where(_f(3, 4) > 0, 1.0, -1.0)]),
    "margin_ranking_loss": (lambda t, a, b, y, r: t.margin_ranking_loss(a, b, y, 0.1, r),
                            [_f(5), _f(5), np.array([1.0, -1.0, 1.0, -1.0, 1.0])]),
    "poisson_nll_loss": (lambda t, x, y, r: t.poisson_nll_loss(x, y, True, False, 1e-8, r),
                         [X34, _f(3, 4, low=0, high=3)]),
    "poisson_nll_loss_full": (lambda t, x, y, r: t.poisson_nll_loss(x, y, False, True, 1e-3, r),
                              [_f(3, 4, low=0.1, high=2), _f(3, 4, low=0, high=3)]),
    "triplet_margin_loss": (lambda t, a, p, n, r: t.triplet_margin_loss(a, p, n, 0.5, 1.5, 1e-6,
                                                                        True, r),
                            [X34, _f(3, 4), _f(3, 4)]),
    "triplet_margin_loss_default": (lambda t, a, p, n, r: t.triplet_margin_loss(a, p, n,
                                                                                reduction=r),
                                    [X34, _f(3, 4), _f(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_form_matches_torch(name):
    fn, arrays, grad = CASES[name]
    _compare(fn, arrays, grad)


@pytest.mark.parametrize("reduction", [0, 1, 2, 3])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_int_reduction(name, reduction):
    """The int enum: 0 none, 1 mean, 2 sum, and any other int no reduction, as ATen."""
    fn, arrays = LOSSES[name]
    _compare(lambda t, *xs: fn(t, *xs, reduction), arrays, (0,))


def test_kl_div_mean_does_not_warn():
    # F.kl_div warns about reduction='mean'; torch.kl_div (the ATen op) does not
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchjax.kl_div(torchjax.tensor(X34), torchjax.tensor(X34).exp())


def test_batch_norm_updates_running_stats():
    stats = {}
    m0, v0 = _f(4), _f(4, low=0.5)
    for lib in (torch, torchjax):
        m, v = lib.tensor(m0), lib.tensor(v0)
        x = lib.tensor(X243, requires_grad=True)
        out = lib.batch_norm(x, None, None, m, v, True, 0.3, 1e-5, True)
        out.pow(2).sum().backward()
        stats[lib] = [_np(out), _np(m), _np(v), _np(x.grad)]
    for a, b in zip(stats[torch], stats[torchjax]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_embedding_padding_row_gets_no_gradient():
    # padding_idx=-1 (ATen's default) means no padding row: row 4 (the last) gets a gradient
    outs = _compare(lambda t, w, i: t.embedding(w, i), [_f(5, 3), np.array([4, 4])], (0,))
    assert np.all(outs[1][1][0][4] != 0)


@pytest.mark.parametrize("name,feature,alpha", [
    ("dropout", False, False), ("alpha_dropout", False, True),
    ("feature_dropout", True, False), ("feature_alpha_dropout", True, True)])
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_draws(name, feature, alpha, inplace):
    """Draws differ between the libraries, so the result's form is checked: each element (or
    each (sample, channel) for feature dropout) is kept and scaled, or dropped, as PyTorch's
    formula says; in place the input itself is returned and changed."""
    p = 0.4
    x = torchjax.tensor(_f(8, 16, 5, low=0.5, high=2.0))
    orig = _np(x).copy()
    fn = getattr(torchjax, name + ("_" if inplace else ""))
    out = fn(x, p, True)
    assert (out is x) == inplace
    if inplace:
        np.testing.assert_array_equal(_np(x), _np(out))
    y = _np(out)
    if alpha:
        # PyTorch's alpha dropout: x * a + b, b = (keep - 1) * alpha * a + alpha * a * p
        alpha = 1.7580993408473766
        a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
        kept = a * orig + alpha * a * p
        dropped = np.full_like(orig, -alpha * a + alpha * a * p)
    else:
        kept, dropped = orig / (1 - p), np.zeros_like(orig)
    is_kept = np.isclose(y, kept, rtol=1e-12)
    assert np.all(is_kept | np.isclose(y, dropped, rtol=1e-12))
    if feature:  # whole (sample, channel) slices together
        assert np.all(is_kept.all(axis=2) | (~is_kept).all(axis=2))
    frac = 1 - is_kept.mean()
    assert 0.25 < frac < 0.55


def test_dropout_eval_returns_input():
    for lib in (torch, torchjax):
        x = lib.tensor(X34)
        assert lib.dropout(x, 0.5, False) is x
        assert lib.dropout_(x, 0.5, False) is x


def _errors(fn):
    got = []
    for lib in (torch, torchjax):
        with pytest.raises(Exception) as e:
            fn(lib)
        got.append(e)
    return got


ERRORS = {
    "dropout_p": (lambda t: t.dropout(t.tensor(X34), 1.5, True),
                  "dropout probability has to be between 0 and 1, but got 1.5"),
    "alpha_dropout__p": (lambda t: t.alpha_dropout_(t.tensor(X34), -0.5, True),
                         "dropout probability has to be between 0 and 1, but got -0.5"),
    "dropout_train_none": (lambda t: t.dropout(t.tensor(X34), 0.5, None),
                           "must be bool, not NoneType"),
    "feature_dropout_1d": (lambda t: t.feature_dropout(t.tensor(_f(3)), 0.5, True),
                           "Feature dropout requires at least 2 dimensions in the input"),
    "kl_div_str": (lambda t: t.kl_div(t.tensor(X34), t.tensor(X34), "mean"),
                   "must be int, not str"),
    "bce_str": (lambda t: t.binary_cross_entropy_with_logits(t.tensor(X34), t.tensor(X34),
                                                             reduction="sum"),
                "must be int, not str"),
    "layer_norm_shape": (lambda t: t.layer_norm(t.tensor(X34), [5]),
                         "Given normalized_shape=[5], expected input with shape [*, 5], but got "
                         "input of size[3, 4]"),
    "group_norm_groups": (lambda t: t.group_norm(t.tensor(X34), 3),
                          "Expected number of channels in input to be divisible by num_groups"),
    "batch_norm_eval_stats": (lambda t: t.batch_norm(t.tensor(X34), None, None, None, None,
                                                     False, 0.1, 1e-5, True),
                              "running_mean must be defined in evaluation mode"),
    "embedding_range": (lambda t: t.embedding(t.tensor(_f(5, 2)), t.tensor([5])),
                        "index out of range in self"),
    "max_pool1d_size": (lambda t: t.max_pool1d(t.tensor(_f(1, 2, 5)), 7),
                        "max_pool1d() Invalid computed output size: 0"),
    "adaptive_max_pool1d_size": (lambda t: t.adaptive_max_pool1d(t.tensor(_f(1, 2, 5)), [2, 3]),
                                 "adaptive_max_pool1d() argument 'output_size' should contain "
                                 "one int (got 2)"),
    "bilinear_size": (lambda t: t.bilinear(t.tensor(_f(2, 3)), t.tensor(_f(2, 4)),
                                           t.tensor(_f(5, 3, 3))),
                      "bilinear(): input2 size does not match weight size: got 4 but expected 3"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, phrase = ERRORS[name]
    te, je = _errors(fn)
    assert phrase in str(te.value), te.value  # the phrase is PyTorch's
    assert phrase in str(je.value), je.value
    assert te.type is je.type or issubclass(je.type, te.type), (te.type, je.type)


def test_missing_train_is_a_type_error():
    for lib in (torch, torchjax):
        with pytest.raises(TypeError, match="train"):
            lib.dropout(lib.tensor(X34), 0.5)


def test_embedding_renorm_():
    w0 = _f(5, 3, low=-3, high=3)
    res = []
    for lib in (torch, torchjax):
        w = lib.tensor(w0)
        before = w._version
        out = lib.embedding_renorm_(w, lib.tensor([0, 2, 2]), 1.0, 2.0)
        assert out is w
        res.append((w.numpy(), w._version - before))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-12)
    assert res[1][1] == res[0][1] and res[0][1] > 0


@pytest.mark.parametrize("make,exc,phrase", [
    (lambda t: (t.tensor(_f(5, 3), requires_grad=True), t.tensor([0])), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda t: (t.tensor(_f(5, 3)), t.tensor([0.0])), RuntimeError,
     "Expected tensor for argument #2 'indices' to have one of the following scalar types: "
     "Long, Int; but got torch.FloatTensor instead"),
    (lambda t: (t.tensor(_f(5, 3)), t.tensor([7])), IndexError,
     "select(): index 7 out of range for tensor of size [5, 3] at dimension 0"),
])
def test_embedding_renorm_errors(make, exc, phrase):
    for lib in (torch, torchjax):
        w, idx = make(lib)
        with pytest.raises(exc) as e:
            lib.embedding_renorm_(w, idx, 1.0, 2.0)
        assert phrase in str(e.value), (lib.__name__, str(e.value))


def test_functional_helpers():
    import torch.nn.functional as TF

    import torchjax.nn.functional as JF
    assert JF.Optional is TF.Optional
    for name in ("has_torch_function", "has_torch_function_unary"):
        assert getattr(JF, name)((torchjax.ones(1),) if name == "has_torch_function"
                                 else torchjax.ones(1)) is False
    assert JF.has_torch_function_variadic(torchjax.ones(1), 2) is False

    for lib in (TF, JF):
        # (fresh functions each time: boolean_dispatch gives the other one the docstring)
        def yes(x, flag=False):
            """doc"""
            return "yes"

        def no(x, flag=False):
            return "no"
        f = lib.boolean_dispatch("flag", 1, False, yes, no, "mod", "fname")
        assert (f(1), f(1, True), f(1, flag=True), f.__name__, f.__module__, f.__doc__) == \
            ("no", "yes", "yes", "fname", "mod", "doc")
        lib.assert_int_or_pair(3, "k", "{} bad")
        lib.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            lib.assert_int_or_pair((1, 2, 3), "k", "{} bad")


NX, NW, NB = _f(2, 3, 4), _f(4), _f(4)


@pytest.mark.parametrize("name,fn", [
    ("layer", lambda t, x, w, b: t.native_layer_norm(x, [4], w, b, 1e-5)),
    ("layer2", lambda t, x, w, b: t.native_layer_norm(x, [3, 4], None, None, 1e-3)),
    ("batch_train", lambda t, x, w, b: t.native_batch_norm(x, w[:3], b[:3], None, None, True,
                                                           0.1, 1e-5)),
    ("batch_eval", lambda t, x, w, b: t.native_batch_norm(
        x, w[:3], b[:3], t.zeros(3, dtype=t.float64), t.ones(3, dtype=t.float64), False, 0.1,
        1e-5)),
])
def test_native_norms(name, fn):
    res = []
    for lib in (torch, torchjax):
        x = lib.tensor(NX, requires_grad=True)
        out, s1, s2 = fn(lib, x, lib.tensor(NW), lib.tensor(NB))
        out.mul(lib.tensor(_weights(out.shape))).sum().backward()
        res.append((type(fn(lib, x, lib.tensor(NW), lib.tensor(NB))).__name__,
                    [_np(t) for t in (out, s1, s2)], [t.requires_grad for t in (s1, s2)],
                    out.grad_fn.name(), _np(x.grad)))
    (ta, va, ra, na, ga), (tb, vb, rb, nb, gb) = res
    assert (tb, rb, nb) == (ta, ra, na)
    for a, b in zip(va, vb):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb, ga, rtol=1e-10, atol=1e-12)


def test_native_dropout_draws():
    x = torchjax.tensor(_f(4000, low=0.5, high=2.0), requires_grad=True)
    out, mask = torchjax.native_dropout(x, 0.3, None)  # None trains, as in PyTorch
    assert mask.dtype is torchjax.bool and not mask.requires_grad
    assert out.grad_fn.name() == "NativeDropoutBackward0"
    m, o, xv = _np(mask), _np(out), _np(x)
    np.testing.assert_allclose(o[m], xv[m] / 0.7, rtol=1e-12)
    assert np.all(o[~m] == 0) and 0.25 < 1 - m.mean() < 0.35
    out.sum().backward()
    np.testing.assert_allclose(_np(x.grad), m / 0.7, rtol=1e-12)
