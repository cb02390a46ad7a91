"""Samples for the rows of src/torchjax/_ops/normalization.py, called through their public
torch.nn.functional forms. Samples that update running statistics also return the buffers, so
their in-place update is compared too."""

import numpy as np

from .harness import Const, S, make


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def with_stats(name):
    """F.<name>(x, running_mean, running_var, ...) and the running statistics after the call."""
    def call(lib, x, rm, rv, *a, **k):
        return getattr(lib.nn.functional, name)(x, rm, rv, *a, **k), rm, rv
    return call


def renormed(lib, idx, w, **k):
    """F.embedding with max_norm, and the weight it renormalised in place."""
    return lib.nn.functional.embedding(idx, w, **k), w.detach()


def weighted_bags(lib, idx, w, psw):
    return lib.nn.functional.embedding_bag(idx, w, mode="sum", per_sample_weights=psw)


def _stats(c):
    return Const(make(c, low=-0.5, high=0.5)), Const(make(c, low=0.5, high=2.0))


def _idx(*shape, high=6, seed=0):
    return np.random.default_rng(seed).integers(0, high, size=shape)


def _offsets(*vals):
    return np.array(vals, dtype=np.int64)


SAMPLES = {
    "_batch_norm": [
        S(make(4, 3, 5), *_stats(3), make(3), make(3), training=True,
          call=with_stats("batch_norm")),
        S(make(4, 3), None, None, training=True, call=F("batch_norm")),
        S(make(4, 3, 5), *_stats(3), make(3), make(3), call=with_stats("batch_norm")),
        S(make(2, 3, 2, 2), *_stats(3), None, make(3), training=True, momentum=0.3, eps=1e-3,
          call=with_stats("batch_norm")),
    ],
    "_instance_norm": [
        S(make(2, 3, 5), *_stats(3), make(3), make(3), call=with_stats("instance_norm")),
        S(make(2, 3, 2, 3), None, None, make(3), make(3), call=F("instance_norm")),
        S(make(2, 3, 4), *_stats(3), use_input_stats=False, call=with_stats("instance_norm")),
    ],
    "layer_norm": [
        S(make(2, 3, 4), (4,), make(4), make(4), call=F("layer_norm")),
        S(make(2, 3, 4), [3, 4], eps=1e-3, call=F("layer_norm")),
        S(make(5, 4), (4,), make(4), None, call=F("layer_norm")),
    ],
    "rms_norm": [
        S(make(2, 3, 4), (4,), make(4), call=F("rms_norm")),
        S(make(3, 4), [3, 4], eps=1e-3, call=F("rms_norm")),
        S(make(2, 5), (5,), call=F("rms_norm")),
    ],
    "group_norm": [
        S(make(2, 4, 3), 2, make(4), make(4), call=F("group_norm")),
        S(make(3, 6, 2), 3, call=F("group_norm")),
        S(make(2, 4, 2, 2), 1, make(4), None, eps=1e-3, call=F("group_norm")),
    ],
    "local_response_norm": [
        S(make(2, 5, 3), 3, call=F("local_response_norm")),
        S(make(2, 4, 2, 3), 2, alpha=0.1, beta=0.5, k=2.0, call=F("local_response_norm")),
    ],
    "_embedding": [
        S(_idx(2, 3), make(6, 3), call=F("embedding")),
        S(_idx(2, 3), make(6, 3), padding_idx=2, call=F("embedding")),
        # scale_grad_by_freq is not the true derivative: above 64 elements, finite differences
        # do not check it
        S(_idx(6, high=22), make(22, 3), padding_idx=-1, scale_grad_by_freq=True,
          call=F("embedding")),
        S(np.array(3), make(6, 3), call=F("embedding")),
        # above 64 elements: finite differences would see the in-place renormalisation
        S(_idx(2, 4, high=22), make(22, 3), max_norm=1.5, call=renormed),
    ],
    "_embedding_bag": [
        S(_idx(6), make(6, 3), _offsets(0, 2, 2, 5), mode="sum", call=F("embedding_bag")),
        S(_idx(2, 3), make(6, 3), call=F("embedding_bag")),
        S(_idx(2, 3), make(6, 3), make(2, 3), call=weighted_bags),
        S(_idx(6, seed=1), make(6, 3), _offsets(0, 3, 5, 6), mode="max", padding_idx=1,
          include_last_offset=True, call=F("embedding_bag")),
        S(_idx(7, high=22, seed=2), make(22, 3), _offsets(0, 4), padding_idx=0,
          scale_grad_by_freq=True, call=F("embedding_bag")),
    ],
}
