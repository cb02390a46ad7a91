"""Vision and distance layers (pixel / channel shuffle, upsampling, distances, flatten) and the
vision functions of nn.functional against PyTorch: outputs, gradients, repr, warnings, errors,
and gumbel_softmax's statistics."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax

RNG = np.random.default_rng(0)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def compare_module(make, *shapes):
    """Build make(nn) in both libraries, run it on random inputs of the given shapes and compare
    repr, output, grad_fn name and input gradients."""
    tm, jm = make(torch.nn), make(torchjax.nn)
    assert repr(jm) == repr(tm)
    xs = [RNG.uniform(-2, 2, size=s).astype(np.float32) for s in shapes]
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    js = [torchjax.tensor(x, requires_grad=True) for x in xs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt, yj = tm(*ts), jm(*js)
    close(yj, yt)
    assert yj.grad_fn.name() == yt.grad_fn.name()
    w = RNG.uniform(-1, 1, size=tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(w)).sum().backward()
    (yj * torchjax.tensor(w)).sum().backward()
    for a, b in zip(js, ts):
        close(a.grad, b.grad)


@pytest.mark.parametrize("make, shapes", [
    (lambda nn: nn.PixelShuffle(2), [(2, 8, 3, 2)]),
    (lambda nn: nn.PixelUnshuffle(3), [(1, 2, 3, 6)]),
    (lambda nn: nn.ChannelShuffle(3), [(2, 6, 2, 2)]),
    (lambda nn: nn.Upsample(scale_factor=2), [(1, 2, 3, 3)]),
    (lambda nn: nn.Upsample(size=(5, 4), mode="bilinear"), [(1, 2, 3, 3)]),
    (lambda nn: nn.Upsample(scale_factor=1.7, mode="bicubic", align_corners=True),
     [(1, 1, 3, 4)]),
    (lambda nn: nn.Upsample(size=7, mode="linear"), [(2, 2, 4)]),
    (lambda nn: nn.Upsample(scale_factor=(1.5, 2.0, 0.5), mode="trilinear"), [(1, 1, 2, 3, 4)]),
    (lambda nn: nn.Upsample(scale_factor=0.6, mode="nearest-exact",
                            recompute_scale_factor=True), [(1, 2, 5, 5)]),
    (lambda nn: nn.Upsample(scale_factor=0.5, mode="area"), [(1, 2, 5, 7)]),
    (lambda nn: nn.Upsample(size=3, mode="area"), [(1, 2, 5)]),
    (lambda nn: nn.UpsamplingNearest2d(size=5), [(1, 2, 3, 2)]),
    (lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), [(1, 2, 3, 2)]),
    (lambda nn: nn.CosineSimilarity(), [(3, 4), (3, 4)]),
    (lambda nn: nn.CosineSimilarity(0, 1e-6), [(4, 2), (4, 1)]),
    (lambda nn: nn.PairwiseDistance(), [(3, 4), (3, 4)]),
    (lambda nn: nn.PairwiseDistance(1.0, 1e-5, True), [(3, 4), (4,)]),
    (lambda nn: nn.Flatten(), [(2, 3, 2, 2)]),
    (lambda nn: nn.Flatten(0, 2), [(2, 3, 2, 2)]),
    (lambda nn: nn.Unflatten(1, (2, 3)), [(2, 6, 2)]),
    (lambda nn: nn.Unflatten(-1, [2, -1]), [(2, 6)]),
], ids=["PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Upsample", "Upsample-bilinear",
        "Upsample-bicubic", "Upsample-linear", "Upsample-trilinear", "Upsample-nearest-exact",
        "Upsample-area", "Upsample-area-1d", "UpsamplingNearest2d", "UpsamplingBilinear2d", "CosineSimilarity", "CosineSimilarity-b",
        "PairwiseDistance", "PairwiseDistance-b", "Flatten", "Flatten-b", "Unflatten",
        "Unflatten-b"])
def test_layer_matches_pytorch(make, shapes):
    compare_module(make, *shapes)


def test_reprs():
    def mods(nn):
        return [nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
                nn.Upsample(scale_factor=(2, 1.5)), nn.Unflatten(1, torch.Size([2, 3])
                                                                 if nn is torch.nn
                                                                 else torchjax.Size([2, 3])),
                nn.PairwiseDistance(1.0), nn.Flatten(0, 1)]
    assert [repr(m) for m in mods(torchjax.nn)] == [repr(m) for m in mods(torch.nn)]
    assert torchjax.nn.PairwiseDistance(3.0).norm == 3.0


def test_unflatten_rejects_named_sizes():
    for lib in (torch, torchjax):
        with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found "
                                            "element of type tuple at pos 0"):
            lib.nn.Unflatten(1, (("C", 2), ("H", 3)))
        with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but "
                                            "found type int"):
            lib.nn.Unflatten(1, 6)


def _error(lib, f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(lib)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)
    return "ok"


_INTERP_ERRORS = {
    "two sizes": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=2, scale_factor=2),
    "no size": lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3, 3)),
    "align nearest": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=2, align_corners=True),
    "recompute with size": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=2, recompute_scale_factor=True),
    "size length": lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3, 3),
                                                             size=(2, 2, 2)),
    "size type": lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3, 3),
                                                           size=(2.0, 2)),
    "scale length": lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3, 3),
                                                              scale_factor=(2.0, 2, 1)),
    "linear on 4-d": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=3, mode="linear"),
    "bicubic on 3-d": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3), size=3, mode="bicubic"),
    "unknown mode": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=3, mode="foo"),
    "antialias nearest": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=3, antialias=True),
    "zero size": lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3), size=0),
    "small scale": lambda lib: lib.nn.functional.interpolate(lib.zeros(1, 2, 3, 3),
                                                             scale_factor=0.2),
    "lanczos align": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3), size=3, mode="lanczos", align_corners=True),
    "int input": lambda lib: lib.nn.functional.interpolate(
        lib.zeros(1, 2, 3, 3, dtype=lib.int64), size=3, mode="bilinear"),
    "grid dtype": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 2, 3, 3), lib.zeros(1, 2, 2, 2, dtype=lib.float64), align_corners=False),
    "grid empty": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 2, 0, 3), lib.zeros(1, 2, 2, 2), align_corners=False),
    "grid 3-d": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(2, 3, 3), lib.zeros(2, 2, 2), align_corners=False),
    "normalize out= with grad": lambda lib: lib.nn.functional.normalize(
        lib.ones(2, requires_grad=True), dim=0, out=lib.zeros(2)),
    "theta int": lambda lib: lib.nn.functional.affine_grid(
        lib.zeros(2, 2, 3, dtype=lib.int64), (2, 3, 2, 4), align_corners=False),
}


@pytest.mark.parametrize("case", list(_INTERP_ERRORS))
def test_error_messages_match(case):
    f = _INTERP_ERRORS[case]
    assert _error(torchjax, f) == _error(torch, f)


def test_antialias_is_not_supported():
    with pytest.raises(NotImplementedError, match="antialias=True"):
        torchjax.nn.functional.interpolate(torchjax.zeros(1, 2, 4, 4), size=2, mode="bilinear",
                                           antialias=True)


def test_deprecation_and_align_corners_warnings():
    F = torchjax.nn.functional
    x = torchjax.zeros(1, 1, 2, 2)
    for f, msg in [(lambda: F.upsample(x, scale_factor=2), "upsample` is deprecated"),
                   (lambda: F.upsample_nearest(x, 3), "upsample_nearest` is deprecated"),
                   (lambda: F.upsample_bilinear(x, 3), "upsample_bilinear` is deprecated"),
                   (lambda: F.grid_sample(x, torchjax.zeros(1, 2, 2, 2)), "align_corners=False"),
                   (lambda: F.affine_grid(torchjax.zeros(1, 2, 3), (1, 1, 2, 2)),
                    "align_corners=False")]:
        with pytest.warns(UserWarning, match=msg):
            f()
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(torchjax.zeros(1, 2, 3), (1, 1, 1, 2), align_corners=True)
    with pytest.warns(UserWarning):
        got = F.upsample_bilinear(torchjax.arange(4.0).reshape(1, 1, 2, 2), 3)
    close(got, torch.nn.functional.interpolate(torch.arange(4.0).reshape(1, 1, 2, 2), 3,
                                               mode="bilinear", align_corners=True))


def test_affine_identity_grid_samples_the_input_back():
    x = torchjax.tensor(RNG.normal(size=(2, 3, 4, 5)).astype(np.float32))
    theta = torchjax.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2)
    for align in (False, True):
        g = torchjax.nn.functional.affine_grid(theta, x.shape, align_corners=align)
        y = torchjax.nn.functional.grid_sample(x, g, align_corners=align)
        close(y, x)


def test_one_hot_errors():
    for lib in (torch, torchjax):
        F = lib.nn.functional
        with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
            F.one_hot(lib.tensor([0, 3, 1]), 3)
        with pytest.raises(RuntimeError, match="Class values must be non-negative."):
            F.one_hot(lib.tensor([0, -1]))
        with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of "
                                               "type LongTensor."):
            F.one_hot(lib.tensor([0, 1], dtype=lib.int32), 2)
        with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
            F.one_hot(lib.zeros(0, dtype=lib.int64))


def test_gumbel_softmax_statistics():
    F = torchjax.nn.functional
    torchjax.manual_seed(0)
    logits = torchjax.tensor(np.log([0.1, 0.2, 0.7]).astype(np.float32)).expand(4000, 3)
    logits = logits.clone().requires_grad_()
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert soft.grad_fn.name() == "SoftmaxBackward0"
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-5)
    hard = F.gumbel_softmax(logits, hard=True)
    assert hard.grad_fn.name() == "AddBackward0"
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    # a hard sample picks class k with probability softmax(logits)[k]
    np.testing.assert_allclose(h.mean(0), [0.1, 0.2, 0.7], atol=0.03)
    hard.select(1, 2).sum().backward()  # straight through: the soft sample's gradient
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(logits, eps=1e-5, dim=0)
