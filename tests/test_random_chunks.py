"""One-off random draws come in chunks from one program per distribution and dtype
(torchjax/_chunk_draws.py), with the values of the exact draw."""

import ml_dtypes
import numpy as np
import pytest

import torchjax as torch
from torchjax import _chunk_draws, _creation, _one_off, _random
from torchjax._x64 import scope

DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]


def _key(seed):
    return _random.key_parts(torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_chunks_give_the_exact_draw_bit_for_bit(dtype, kind):
    dt = np.dtype(dtype)
    with scope():
        for n, seed, (a, b) in [(1000, 0, (0.0, 1.0)), (_chunk_draws.CHUNK, 1, (-0.3, 0.7)),
                                (_chunk_draws.CHUNK + 1, 2, (0.0, 1.0)),
                                (2 * _chunk_draws.CHUNK + 123, 3, (2.0, 0.5))]:
            key, off = _key(seed)
            got, like = _chunk_draws.draw(kind, n, dt, key, off, a, b)
            want = np.asarray(_creation._sampler(kind, (n,), dt)(key, off, a, b))
            assert got.dtype == want.dtype and got.shape == (n,)
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        # a tiny draw equals the first values of a larger exact draw (the cut the size
        # classes made: XLA may round a one-element program's `a + b * x` otherwise)
        key, off = _key(4)
        got, _ = _chunk_draws.draw(kind, 3, dt, key, off, -0.3, 0.7)
        want = np.asarray(_creation._sampler(kind, (1024,), dt)(key, off, -0.3, 0.7))[:3]
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_a_model_of_new_shapes_compiles_no_sampler(monkeypatch):
    # new shapes for this process: an earlier test of the worker may have made zeros of one
    # of the random widths twice, after which they come from a program (_one_off.few)
    monkeypatch.setattr(_one_off, "_calls", {})

    def programs(fn):
        torch.compile_stats(reset=True)
        fn()
        st = torch.compile_stats()
        return st.compiled + st.cache_hits

    torch.nn.Linear(3, 3)  # the uniform chunk program, made once per process
    torch.nn.Embedding(3, 3)  # the normal one
    widths = [int(w) for w in np.random.default_rng().integers(100, 2000, size=7)]
    # 6 weights of 6 new shapes spanning several of the former size classes, 6 biases,
    # an embedding: no program (each was a sampler per size class, 0.2-0.3 s of XLA each)
    assert programs(lambda: [torch.nn.Linear(a, b) for a, b in zip(widths, widths[1:])]
                    + [torch.nn.Embedding(widths[0], widths[1])]) == 0


def test_values_do_not_depend_on_the_path():
    """The same seed gives the same parameters whether drawn in chunks (the first draws of
    a shape) or by the shape's own sampler (after HOST_CALLS draws of it)."""
    shape = (7, int(np.random.default_rng().integers(3000, 9000)))
    draws = []
    for _ in range(10):
        torch.manual_seed(11)
        draws.append(torch.randn(shape).numpy())
    assert _one_off._calls[("sample", "normal", shape, np.dtype(np.float32))] == 8
    for d in draws[1:]:
        np.testing.assert_array_equal(d, draws[0])
