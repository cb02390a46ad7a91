"""Samples for the rows of src/torchjax/_ops/pooling.py, adaptive_pooling.py and unpooling.py.

Samples with ties (rounded values) or NaN hold more than 64 elements, so that the table test
compares their gradients with PyTorch's but skips finite differences (meaningless at a tie)."""

import numpy as np

from .harness import A, S, make


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def _ties(*shape):
    """Values in {-2, ..., 2}: many ties inside every window."""
    return np.round(make(*shape))


_NAN = np.resize(A(1., np.nan, 3., np.nan, 2., 2., -np.inf, -np.inf, -np.inf, 0.5, 4.), 66) \
    .reshape(1, 2, 33)


def _unpool_indices(lead, out, kernel, plane=None, seed=0):
    """Valid max_pool indices into a plane of the given size (default out * kernel): one
    random position inside each (non-overlapping) window."""
    rng = np.random.default_rng(seed)
    size = plane or [o * k for o, k in zip(out, kernel)]
    flat = np.zeros(tuple(lead) + tuple(out), np.int64)
    for a, (o, k) in enumerate(zip(out, kernel)):
        pos = np.arange(o).reshape((-1,) + (1,) * (len(out) - a - 1)) * k + \
            rng.integers(0, k, size=tuple(lead) + tuple(out))
        flat = flat * size[a] + pos
    return flat


def _duplicates():
    """Indices sent to the same position carry equal values (as overlapping max_pool windows
    give), so the forward is defined; PyTorch's gradient reaches every one of them."""
    x = np.tile(A(5., 5., 7., -1.).reshape(1, 1, 2, 2), (1, 17, 1, 1))
    idx = np.tile(np.array([[0, 0], [5, 11]]).reshape(1, 1, 2, 2), (1, 17, 1, 1))
    return x, idx


SAMPLES = {
    "max_pool1d_with_indices": [
        S(make(2, 3, 7), 3, 2, 1, call=F("max_pool1d_with_indices")),
        S(make(3, 9), 2, 3, 1, 3, True, call=F("max_pool1d_with_indices")),
        S(_NAN, 3, 1, 1, call=F("max_pool1d_with_indices")),
    ],
    "max_pool2d_with_indices": [
        S(make(1, 2, 4, 5), 2, call=F("max_pool2d_with_indices")),
        S(make(2, 2, 5, 6), (3, 2), (2, 1), (1, 0), (2, 1), True,
          call=F("max_pool2d_with_indices")),
        S(_ties(2, 3, 4, 4), 3, 1, 1, call=F("max_pool2d_with_indices")),
        S(make(3, 5, 5), 2, ceil_mode=True, call=F("max_pool2d_with_indices")),
    ],
    "max_pool3d_with_indices": [
        S(make(1, 1, 3, 4, 3), 2, 1, call=F("max_pool3d_with_indices")),
        S(make(2, 1, 5, 4, 5), 3, 2, 1, 1, True, call=F("max_pool3d_with_indices")),
        S(_ties(2, 4, 5, 4), 2, 1, dilation=(1, 2, 1), call=F("max_pool3d_with_indices")),
    ],
    "avg_pool1d": [
        S(make(2, 3, 7), 3, 2, 1, True, call=F("avg_pool1d")),
        S(make(3, 6), 2, padding=1, count_include_pad=False, call=F("avg_pool1d")),
        S(make(2, 3, 8, dtype="int64", low=-9, high=9), 3, 2, 1, call=F("avg_pool1d")),
    ],
    "avg_pool2d": [
        S(make(1, 2, 4, 4), 2, call=F("avg_pool2d")),
        S(make(2, 3, 5, 5), 3, 2, 1, True, False, call=F("avg_pool2d")),
        S(make(3, 5, 6), (3, 2), (2, 3), (1, 1), True, divisor_override=3,
          call=F("avg_pool2d")),
        S(make(2, 2, 4, 4, dtype="int64", low=-9, high=9), 3, 2, 1, call=F("avg_pool2d")),
    ],
    "avg_pool3d": [
        S(make(1, 1, 3, 4, 3), 2, 1, call=F("avg_pool3d")),
        S(make(1, 2, 4, 5, 4), 3, 2, 1, True, False, call=F("avg_pool3d")),
        S(make(2, 3, 3, 3), 2, 1, 1, divisor_override=5, call=F("avg_pool3d")),
    ],
    "adaptive_avg_pool1d": [
        S(make(2, 3, 7), 3, call=F("adaptive_avg_pool1d")),
        S(make(3, 5), 8, call=F("adaptive_avg_pool1d")),
    ],
    "adaptive_avg_pool2d": [
        S(make(2, 3, 5, 7), (3, 4), call=F("adaptive_avg_pool2d")),
        S(make(3, 4, 5), (6, None), call=F("adaptive_avg_pool2d")),
        S(make(2, 2, 4, 4), 1, call=F("adaptive_avg_pool2d")),
    ],
    "adaptive_avg_pool3d": [
        S(make(1, 1, 4, 5, 3), (2, 3, 2), call=F("adaptive_avg_pool3d")),
        S(make(2, 3, 4, 5), (None, 2, 3), call=F("adaptive_avg_pool3d")),
    ],
    "adaptive_max_pool1d_with_indices": [
        S(make(3, 5), 8, call=F("adaptive_max_pool1d_with_indices")),
        S(_NAN, 7, call=F("adaptive_max_pool1d_with_indices")),
    ],
    "adaptive_max_pool2d_with_indices": [
        S(make(1, 2, 5, 6), (3, 4), call=F("adaptive_max_pool2d_with_indices")),
        S(_ties(2, 3, 5, 7), (2, 3), call=F("adaptive_max_pool2d_with_indices")),
        S(make(3, 4, 3), (None, 5), call=F("adaptive_max_pool2d_with_indices")),
    ],
    "adaptive_max_pool3d_with_indices": [
        S(make(1, 1, 3, 4, 3), (2, 3, 2), call=F("adaptive_max_pool3d_with_indices")),
        S(_ties(2, 4, 5, 3), (3, None, 2), call=F("adaptive_max_pool3d_with_indices")),
    ],
    "max_unpool2d": [
        S(make(2, 3, 2, 2), _unpool_indices((2, 3), (2, 2), (2, 2)), 2, call=F("max_unpool2d")),
        S(make(3, 2, 3), _unpool_indices((3,), (2, 3), (2, 2), (5, 7)), 2, output_size=(5, 7),
          call=F("max_unpool2d")),
        S(*_duplicates(), 2, call=F("max_unpool2d"), desc="duplicate indices"),
    ],
    "max_unpool3d": [
        S(make(1, 2, 2, 2, 2), _unpool_indices((1, 2), (2, 2, 2), (2, 2, 2)), 2,
          call=F("max_unpool3d")),
        S(make(2, 1, 2, 3), _unpool_indices((2,), (1, 2, 3), (3, 2, 2), (4, 5, 6)), (3, 2, 2),
          output_size=(4, 5, 6), call=F("max_unpool3d")),
    ],
}
