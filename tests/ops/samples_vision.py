"""Samples for the rows of src/torchjax/_ops/vision.py, called through the public functions
(F.interpolate reaches the upsampling rows, F.grid_sample the grid_sampler rows, ...)."""

import numpy as np

from .harness import A, Const, S, err, make, raises


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def T(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


def interp(mode, **fixed):
    """call= for F.interpolate(x, mode=mode, **fixed, **sample kwargs)."""
    return lambda lib, x, **k: lib.nn.functional.interpolate(x, mode=mode, **fixed, **k)


def grid(nd, mode, padding, align):
    return lambda lib, x, g: lib.nn.functional.grid_sample(x, g, mode, padding, align)


def _grid(*shape, seed=0):
    # coordinates a little outside [-1, 1], so that padding matters
    return make(*shape, low=-1.3, high=1.3, seed=seed)


_LINEAR = [dict(align_corners=False), dict(align_corners=True)]

SAMPLES = {
    "pixel_shuffle": [
        S(make(2, 8, 2, 3), 2, call=F("pixel_shuffle")),
        S(make(9, 2, 2), 3, call=T("pixel_shuffle"), desc="unbatched"),
        S(np.arange(16).reshape(1, 4, 2, 2), 2, call=F("pixel_shuffle"), desc="int"),
        S(make(2, 3), 2, call=raises(F("pixel_shuffle"))),
        S(make(1, 5, 2, 2), 2, call=raises(F("pixel_shuffle"))),
        S(make(1, 4, 2, 2), 0, call=raises(F("pixel_shuffle"))),
    ],
    "pixel_unshuffle": [
        S(make(2, 2, 4, 6), 2, call=F("pixel_unshuffle")),
        S(make(1, 3, 3), 3, call=T("pixel_unshuffle")),
        S(make(1, 4, 3, 2), 2, call=raises(F("pixel_unshuffle"))),
        S(make(1, 4, 2, 3), 2, call=raises(F("pixel_unshuffle"))),
        S(make(4, 2), 2, call=raises(F("pixel_unshuffle"))),
    ],
    "channel_shuffle": [
        S(make(2, 6, 2, 2), 3, call=F("channel_shuffle")),
        S(make(2, 4, 3), 2, call=T("channel_shuffle"), desc="3-d"),
        S(make(1, 4, 2, 2), 3, call=raises(F("channel_shuffle"))),
        S(make(1, 4, 2, 2), 0, call=raises(F("channel_shuffle"))),
        S(make(4, 2), 2, call=raises(F("channel_shuffle"))),
    ],
    "native_channel_shuffle": [
        S(make(2, 6, 2), 2, call=F("native_channel_shuffle"), grad=False),
        S(make(1, 4, 2),
          call=lambda lib, x: err(lambda: lib.native_channel_shuffle(
              x.requires_grad_(), 2).sum().backward(), 60),
          desc="no derivative"),
    ],
    # -- upsampling kernels, by F.interpolate mode: odd sizes, up and down -----------------
    # one small sample per row is checked by finite differences; the others have more than
    # 64 elements, which the finite differences skip (the gradients are still PyTorch's)
    "upsample_nearest1d": [
        S(make(1, 2, 7), size=3, call=interp("nearest")),
        S(make(2, 11, 5), size=7, call=interp("nearest")),
        # PyTorch's gradient here is not its forward's (see _ops/vision.py)
        S(make(1, 22, 3), scale_factor=2.1, call=interp("nearest"), desc="user scale"),
        S(np.arange(6, dtype=np.uint8).reshape(1, 2, 3), size=5, call=interp("nearest")),
        S(np.arange(6).reshape(1, 2, 3), size=5, call=raises(interp("nearest"))),
    ],
    "upsample_nearest2d": [
        S(make(1, 1, 3, 4), scale_factor=(1.3, 2.1), call=interp("nearest"),
          desc="1x and 2x output sizes copy / halve indices"),
        S(make(2, 4, 3, 5), size=(5, 4), call=interp("nearest")),
        S(make(1, 2, 7, 6), scale_factor=0.6, recompute_scale_factor=True,
          call=interp("nearest")),
        S(make(1, 1, 3, 3), size=(0, 2), call=raises(interp("nearest"))),
        S(make(1, 0, 3, 3), size=(2, 2), call=raises(interp("nearest"))),
    ],
    "upsample_nearest3d": [
        S(make(1, 1, 2, 2, 3), size=(3, 1, 5), call=interp("nearest")),
        S(make(1, 4, 3, 2, 3), scale_factor=(1.3, 2.1, 0.7), call=interp("nearest"),
          desc="user scale"),
    ],
    "_upsample_nearest_exact1d": [
        S(make(1, 2, 5), size=8, call=interp("nearest-exact")),
        S(make(2, 5, 7), scale_factor=0.45, call=interp("nearest-exact")),
    ],
    "_upsample_nearest_exact2d": [
        S(make(1, 1, 3, 3), scale_factor=1.3, call=interp("nearest-exact")),
        S(make(1, 5, 3, 5), size=(7, 3), call=interp("nearest-exact")),
    ],
    "_upsample_nearest_exact3d": [
        S(make(1, 1, 3, 2, 3), size=(2, 3, 4), call=interp("nearest-exact")),
    ],
    "upsample_linear1d": [
        S(make(1, 2, 4), scale_factor=1.7, call=interp("linear", align_corners=False)),
        *(S(make(2, 7, 5), size=8, call=interp("linear", **k)) for k in _LINEAR),
        S(make(1, 10, 7), size=3, call=interp("linear", align_corners=True)),
        S(make(1, 2, 3), size=1, call=interp("linear", align_corners=True)),
    ],
    "upsample_bilinear2d": [
        S(make(1, 1, 4, 3), scale_factor=(2.5, 0.7), call=interp("bilinear")),
        *(S(make(2, 3, 3, 4), size=(5, 7), call=interp("bilinear", **k)) for k in _LINEAR),
        S(make(1, 3, 5, 6), size=(3, 2), call=interp("bilinear", align_corners=True)),
        S(make(1, 8, 3, 3), scale_factor=1.3, call=interp("bilinear"),
          desc="equal sizes copy whatever the scale"),
    ],
    "upsample_trilinear3d": [
        S(make(1, 1, 2, 3, 3), size=(3, 4, 2), call=interp("trilinear", align_corners=True)),
        S(make(1, 4, 2, 3, 3), size=(3, 4, 2), call=interp("trilinear", align_corners=False)),
    ],
    "upsample_bicubic2d": [
        S(make(1, 1, 4, 3), scale_factor=(2.5, 0.7), call=interp("bicubic")),
        *(S(make(1, 6, 3, 4), size=(5, 7), call=interp("bicubic", **k)) for k in _LINEAR),
        S(make(1, 3, 6, 5), size=(3, 2), call=interp("bicubic", align_corners=False)),
        S(make(1, 1, 2, 3), size=(1, 5), call=interp("bicubic", align_corners=True)),
    ],
    # -- grid_sample -------------------------------------------------------------------------
    "grid_sampler_2d": [
        S(make(2, 2, 3, 4), _grid(2, 2, 3, 2), call=grid(2, "bilinear", "zeros", False)),
        S(make(1, 1, 4, 3), _grid(1, 2, 3, 2), call=grid(2, "bilinear", "border", True)),
        S(make(1, 1, 3, 3), _grid(1, 2, 2, 2), call=grid(2, "bilinear", "reflection", False)),
        S(make(2, 3, 3, 4), _grid(2, 3, 2, 2), call=grid(2, "nearest", "reflection", True),
          desc="more than 64 elements: no finite differences across rounding steps"),
        S(make(1, 1, 4, 3), _grid(1, 2, 2, 2), call=grid(2, "bicubic", "zeros", False)),
        S(make(1, 1, 3, 3), _grid(1, 2, 2, 2), call=grid(2, "bicubic", "reflection", True)),
        S(make(1, 2, 3, 3), make(2, 2, 2, 2), call=raises(grid(2, "bilinear", "zeros", False))),
        S(make(1, 2, 3, 3), make(1, 2, 2, 2), call=raises(grid(2, "linear", "zeros", False))),
    ],
    "grid_sampler_3d": [
        S(make(1, 2, 2, 3, 3), _grid(1, 2, 2, 2, 3), call=grid(3, "bilinear", "zeros", False)),
        S(make(1, 1, 3, 2, 3), _grid(1, 2, 2, 2, 3), call=grid(3, "nearest", "border", False)),
        S(make(1, 1, 2, 2, 2), make(1, 2, 2, 2, 3), call=raises(grid(3, "bicubic", "zeros", True))),
    ],
    "affine_grid_generator": [
        S(make(2, 2, 3), (2, 3, 4, 5), False, call=F("affine_grid")),
        S(make(1, 2, 3), (1, 1, 3, 2), True, call=F("affine_grid")),
        S(make(2, 3, 4), (2, 1, 2, 3, 4), False, call=F("affine_grid"), desc="3-d"),
        S(make(2, 2, 2), (2, 3, 4, 4), False, call=raises(F("affine_grid"))),
        S(make(2, 2, 3), (2, 3, 4), False, call=raises(F("affine_grid"))),
        S(make(2, 2, 3), (2, 3, 0, 4), False, call=raises(F("affine_grid"))),
        S(make(2, 2, 3), (3, 3, 2, 4), False, call=raises(F("affine_grid"))),
    ],
    # -- distances and normalize ---------------------------------------------------------------
    "cosine_similarity": [
        S(make(3, 4), make(3, 4), call=F("cosine_similarity")),
        S(make(2, 3, 4), make(3, 1), dim=1, eps=1e-6, call=F("cosine_similarity"),
          desc="broadcast"),
        # more than 64 elements: no finite differences across the kink at a zero norm
        S(np.zeros((22, 3), np.float32), make(22, 3), call=F("cosine_similarity"),
          desc="zero vectors"),
        S(np.arange(6).reshape(2, 3), make(2, 3), call=F("cosine_similarity"), desc="int"),
        S(np.arange(6).reshape(2, 3), np.ones((2, 3), dtype=np.int64),
          call=raises(F("cosine_similarity"))),
        S(make(2, 3), make(4, 3), call=raises(F("cosine_similarity"))),
    ],
    "pairwise_distance": [
        S(make(3, 4), make(3, 4), call=F("pairwise_distance")),
        S(make(3, 4), make(4), 1.0, 1e-5, True, call=F("pairwise_distance")),
        S(make(2, 3), make(2, 3), p=float("inf"), call=T("pairwise_distance")),
        S(np.arange(6).reshape(2, 3), np.ones((2, 3), dtype=np.int64),
          call=F("pairwise_distance"), desc="int"),
    ],
    "pdist": [
        S(make(4, 3), call=F("pdist")),
        S(make(4, 3), 1, call=F("pdist")),
        S(make(3, 2), 0.5, call=T("pdist")),
        S(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]], dtype=np.float32), call=F("pdist"),
          desc="equal rows: zero distance"),
        # more than 64 elements: no finite differences at a tie
        S(np.resize(A(1.0, -2.0, 3.0, 0.0), (33, 2)), float("inf"), call=F("pdist"),
          desc="tied max: each gets the full gradient"),
        S(make(1, 3), call=F("pdist")),
        S(make(3, 2, 2), call=raises(F("pdist"))),
        S(make(3, 2), -1.0, call=raises(F("pdist"))),
    ],
    "normalize": [
        S(make(3, 4), call=F("normalize")),
        S(make(2, 3, 4), p=1.0, dim=-1, call=F("normalize")),
        S(np.resize(A(0.0, 1e-13), 65), dim=0, call=F("normalize"), desc="norm below eps"),
        S(make(3), dim=0, eps=1e-3, p=3.0, call=F("normalize")),
        S(make(3), call=raises(F("normalize")), desc="dim out of range"),
        S(np.arange(3), dim=0, call=raises(F("normalize"))),
        S(make(2, 3), Const(np.zeros((2, 3), np.float32)),
          call=lambda lib, x, out: lib.nn.functional.normalize(x, out=out), grad=False,
          desc="out="),
    ],
    "one_hot": [
        S(np.array([0, 2, 1, 2]), call=F("one_hot")),
        S(np.array([[0, 1], [3, 1]]), 5, call=F("one_hot")),
        S(np.array(2), 3, call=F("one_hot"), desc="0-d"),
        S(np.zeros((0,), np.int64), 3, call=F("one_hot")),
        S(np.array([0, 3, 1]), 3, call=raises(F("one_hot"))),
        S(np.array([0, -1, 1]), 3, call=raises(F("one_hot"))),
        S(np.array([0, 1], dtype=np.int32), 3, call=raises(F("one_hot"))),
        S(np.zeros((0,), np.int64), call=raises(F("one_hot"))),
    ],
}
