"""Samples for the rows in _ops/histogram.py (torch.histogram, Tensor.histogram). PyTorch
cannot differentiate a histogram: values are compared, and backward's error."""

import numpy as np

from .harness import S, err, own_make, raises

# arrays of this file's own: the shared generator's draws for later files stay as they were
make = own_make(103)

X = np.array([1.0, 2, 1, 4, 2.5, 7], np.float32)
EDGES = np.array([0.0, 1.5, 3, 10], np.float32)


def _h(lib, x, *args, **kwargs):
    return lib.histogram(x, *args, **kwargs)


def _h_w(lib, x, w, *args, **kwargs):
    return lib.histogram(x, *args, weight=w, **kwargs)


def _backward(lib, x, bins):
    """The results' requires_grad, and what backward() through the hist does."""
    h = lib.histogram(x.requires_grad_(), bins)
    return h.hist.requires_grad, h.bin_edges.requires_grad, err(lambda: h.hist.sum().backward())


SAMPLES = {
    "_histogram_bin_ct": [
        S(X, 3, call=_h, grad=False),
        S(X, 3, range=(0.0, 5.0), call=_h, grad=False),
        S(X, np.ones(6, np.float32) * 2, 3, density=True, call=_h_w, grad=False),
        S(make(4, 5), call=_h, grad=False),  # 100 bins over the data's range
        S(make(4, 5, dtype="float64"), 7, call=_h, grad=False),
        S(np.array([3.0, 3.0], np.float32), 2, call=_h, grad=False),  # one point: +-0.5
        S(np.zeros(0, np.float32), 2, call=_h, grad=False),
        S(X, 2, range=(1.0, 1.0), call=_h, grad=False),
        S(make(3, 4), 4, call=lambda lib, x, b: x.histogram(b), grad=False),
        S(X, 2, call=_backward, grad=False),
        S(X.astype("int64"), 2, call=raises(_h), grad=False),
        S(X, 0, call=raises(_h), grad=False),
        S(X, 2, range=(3.0, 1.0), call=raises(_h), grad=False),
        S(X, np.ones(5, np.float32), 2, call=raises(_h_w), grad=False),
        S(np.array([1.0, np.nan], np.float32), 2, call=raises(_h), grad=False),
    ],
    "_histogram_bins_tensor": [
        S(X, EDGES, call=_h, grad=False),
        S(X, EDGES, density=True, call=_h, grad=False),
        S(X, np.array([3.0, 1.0], np.float32), call=_h, grad=False),  # unsorted: nothing in
        S(X, np.ones(6, np.float32) * 0.5, EDGES, call=_h_w, grad=False),
        S(make(2, 3, dtype="float64"), np.linspace(-2, 2, 5), call=_h, grad=False),
        S(X, EDGES, call=_backward, grad=False),
        S(X, EDGES.reshape(2, 2), call=raises(_h), grad=False),
    ],
}


P = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 0.7]], np.float32)


def _hdd(lib, x, *args, **kwargs):
    return lib.histogramdd(x, *args, **kwargs)


def _hdd_w(lib, x, w, *args, **kwargs):
    return lib.histogramdd(x, *args, weight=w, **kwargs)


def _hdd_edges(lib, x, *edges, **kwargs):
    return lib.histogramdd(x, list(edges), **kwargs)


def _flat_dd(f):
    """histogramdd's (hist, (edges...)) flattened for the harness."""
    def call(lib, *args, **kwargs):
        res = f(lib, *args, **kwargs)
        return (res.hist, *res.bin_edges)
    return call


SAMPLES.update({
    "_histogramdd_bin_ct": [
        S(P, [3, 3], call=_flat_dd(_hdd), grad=False),
        S(P, 2, call=_flat_dd(_hdd), grad=False),
        S(P, np.arange(5, dtype=np.float32), [3, 2], call=_flat_dd(_hdd_w), grad=False),
        S(P, [2, 2], range=[0.0, 1.0, 0.0, 1.0], density=True, call=_flat_dd(_hdd),
          grad=False),
        S(make(2, 5, 3, dtype="float64"), (2, 3, 4), call=_flat_dd(_hdd), grad=False),
        S(P, [2, 2, 2], call=raises(_hdd), grad=False),
        S(P, [2, 2], range=[0.0, 1.0], call=raises(_hdd), grad=False),
        S(P, [2, 0], call=raises(_hdd), grad=False),
    ],
    "_histogramdd_bins_tensors": [
        S(P, np.array([0.0, 1, 3], np.float32), np.array([0.0, 2.5], np.float32),
          call=_flat_dd(_hdd_edges), grad=False),
        S(P, np.array([0.0, 1, 3], np.float32), np.array([0.0, 0.5, 2.5], np.float32),
          density=True, call=_flat_dd(_hdd_edges), grad=False),
    ],
})
