"""One-off random draws come in chunks from one program per distribution and dtype
(torchjax/_chunk_draws.py), with the values of the exact draw."""

import ml_dtypes
import numpy as np
import pytest

import torchjax as torch
from torchjax import _chunk_draws, _creation, _one_off, _program_prefetch, _programs, _random
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

    torch.nn.Linear(1100, 1000)  # the chunk program (beyond NumPy's draws), made once
    torch.nn.Embedding(3, 3)  # the normal values' transform (_host_normal), made once
    widths = [int(w) for w in np.random.default_rng().integers(100, 2000, size=7)]
    # 6 weights of 6 new shapes spanning several of the former size classes, 6 biases,
    # an embedding: no program (each was a sampler per size class, 0.2-0.3 s of XLA each)
    assert programs(lambda: [torch.nn.Linear(a, b) for a, b in zip(widths, widths[1:])]
                    + [torch.nn.Embedding(widths[0], widths[1])]) == 0


def test_values_do_not_depend_on_the_path():
    """The same seed gives the same parameters whether drawn in chunks (the first draws of
    a shape) or by the shape's own sampler (after CHUNKED_DRAWS draws of it)."""
    shape = (7, int(np.random.default_rng().integers(3000, 9000)))
    draws = []
    from torchjax import _creation_random
    for _ in range(_creation_random.CHUNKED_DRAWS + 2):
        torch.manual_seed(11)
        draws.append(torch.randn(shape).numpy())
    assert _one_off._calls[("sample", "normal", shape, np.dtype(np.float32))] == (
        _creation_random.CHUNKED_DRAWS)
    for d in draws[1:]:
        np.testing.assert_array_equal(d, draws[0])


# -- float32 uniform draws computed with NumPy (_chunk_draws._host_uniform) --------------------

@pytest.fixture
def host_draws(monkeypatch):
    """The NumPy path on, with its per-process budget untouched by earlier tests."""
    from torchjax import _host_tier
    monkeypatch.setattr(_chunk_draws, "_host_drawn", [0])
    was = _host_tier.ON[0]
    _host_tier.ON[0] = True
    yield
    _host_tier.ON[0] = was


@pytest.mark.parametrize("seed, offset", [(0, 0), (7, 3), (2 ** 40 + 9, 2 ** 32 - 1)])
@pytest.mark.parametrize("a, b", [(0.0, 1.0), (-0.1, 0.1), (-3.7, 2.25), (1e-3, 1e3),
                                  (2.0, 0.5), (-1e-30, 1e-30), (0.0, 0.02), (1e3, 1e-3)])
@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_numpy_draws_are_the_chunk_programs_bit_for_bit(host_draws, kind, seed, offset, a, b):
    """_host_uniform (NumPy's values) and _host_normal (NumPy's threefry bits through JAX's own
    normal: a key that is the bits): the chunk program's values exactly, across chunks and a
    cut last chunk."""
    n = 2 * _chunk_draws.CHUNK + 77
    key = torch.Generator().manual_seed(seed)._base_key()
    which, host = ((0, _chunk_draws._host_uniform) if kind == "uniform"
                   else (1, _chunk_draws._host_normal))
    with scope():
        run = _chunk_draws._program(np.float32)
        want = np.concatenate([np.asarray(run(key, np.uint32(offset), np.uint32(s), a, b)[which])
                               for s in range(0, n, _chunk_draws.CHUNK)])[:n]
        got = host(n, np.float32, key, np.uint32(offset), a, b)
    assert got is not None and got.dtype == np.float32 and got.shape == (n,)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_the_probe_tells_the_two_roundings_apart():
    import jax
    x, y, z = _chunk_draws._PROBE
    once, twice = _chunk_draws._fma32(x, y, z), _chunk_draws._mul_add32(x, y, z)
    assert once[0] == np.float32(1 + 2 ** -23) and twice[0] == np.float32(1 + 2 ** -22)
    # the float64 sum alone lands on the tie (the case _fma32's tie rule is for)
    naive = (x.astype(np.float64) * np.float64(y) + np.float64(z)).astype(np.float32)
    assert naive[0] == twice[0]
    # and XLA's own rounding under this process's options is one of the two
    got = np.asarray(jax.jit(_chunk_draws._probe)(x, y, z))
    assert _chunk_draws._multiply_add(
        repr(sorted((_programs.compiler_options or {}).items()))) is (
        _chunk_draws._fma32 if got[0] == once[0] else _chunk_draws._mul_add32)


def test_fma32_corrects_exactly_the_ties():
    """_fma32's quick path (the float64 sum rounded to float32) and its tie path (TwoSum
    on every value) agree: on random values, on exact float32 midpoints, on sums the float64
    rounding put on a midpoint (the probe's), and below float32's normal range."""
    rng = np.random.default_rng(0)
    x = rng.random(100_000, dtype=np.float32)
    tie = np.float32(2.0 ** -24)  # 1 + 2**-24: halfway between 1 and 1 + 2**-23
    px, py, pz = _chunk_draws._PROBE
    for xs, y, z in [(x, np.float32(0.12), np.float32(-0.06)),
                     (np.array([tie, 3 * tie, 0.5, 0.0], np.float32), np.float32(1), np.float32(1)),
                     (px, py, pz),
                     (x, np.float32(2e-38), np.float32(-1e-38)),
                     (x, np.float32(1e-30), np.float32(-1e-30))]:
        got = _chunk_draws._fma32(xs, y, z)
        want = _chunk_draws._fma32_ties(xs, y, z)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert _chunk_draws._fma32(np.array([tie], np.float32), np.float32(1),
                               np.float32(1))[0] == np.float32(1)  # (to even)


def test_a_cnn_is_built_without_a_program(host_draws, monkeypatch):
    monkeypatch.setattr(_one_off, "_calls", {})
    torch.compile_stats(reset=True)
    nn = torch.nn
    torch.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 26 * 26, 10))
    st = torch.compile_stats()
    assert st.compiled + st.cache_hits == 0
    # the same weights as the chunk program's (the NumPy path off)
    monkeypatch.setattr(_chunk_draws, "HOST_MAX", 0)
    torch.manual_seed(3)
    again = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8 * 26 * 26, 10))
    for p, q in zip(model.parameters(), again.parameters()):
        assert np.array_equal(p.detach().numpy().view(np.uint32),
                              q.detach().numpy().view(np.uint32))


def test_an_embedding_is_drawn_from_numpy_bits(host_draws, monkeypatch):
    """An Embedding's normal draw takes NumPy's bits and the small transform program, not the
    chunk program (threefry inside: ~4x the compile), and its weights are the chunk
    program's values."""
    monkeypatch.setattr(_one_off, "_calls", {})
    rows = int(np.random.default_rng().integers(20, 120))  # (a new shape, <= HOST_SMALL)
    served = []
    real = _chunk_draws._host_normal
    monkeypatch.setattr(_chunk_draws, "_host_normal",
                        lambda *a: served.append(real(*a)) or served[-1])
    calls = []
    chunk = _chunk_draws._program(np.float32)
    monkeypatch.setattr(_chunk_draws, "_program",
                        lambda d: (lambda *a: calls.append(a) or chunk(*a)))
    torch.manual_seed(5)
    emb = torch.nn.Embedding(rows, 64)
    assert len(served) == 1 and served[0] is not None and calls == []
    monkeypatch.setattr(_chunk_draws, "HOST_MAX", 0)  # (now the chunk program's own draw)
    torch.manual_seed(5)
    again = torch.nn.Embedding(rows, 64)
    assert calls
    assert np.array_equal(emb.weight.detach().numpy().view(np.uint32),
                          again.weight.detach().numpy().view(np.uint32))


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_numpy_draws_stop_at_their_budget(host_draws, monkeypatch, kind):
    """Both distributions share NumPy's budget; past it the chunk program draws, the same
    values."""
    host = _chunk_draws._host_uniform if kind == "uniform" else _chunk_draws._host_normal
    monkeypatch.setattr(_chunk_draws, "HOST_VALUES", 15)
    key, off = _key(5)
    with scope():
        assert host(10, np.float32, key, off, 0.0, 1.0) is not None
        # (10 values drawn: 10 more would pass 15, the chunk program draws them)
        assert host(10, np.float32, key, off, 0.0, 1.0) is None
        assert host(5, np.float32, key, off, 0.0, 1.0) is not None
        assert host(1, np.float64, key, off, 0.0, 1.0) is None
        got, _ = _chunk_draws.draw(kind, 60, np.float32, key, off, 0.0, 1.0)
        want = np.asarray(_creation._sampler(kind, (1024,), np.dtype(np.float32))(
            key, off, 0.0, 1.0))[:60]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_uniform_draws_take_the_chunk_program_when_it_is_at_hand(host_draws):
    """Once the chunk program is made (an Embedding's normal draw made it), uniform draws
    come from it: ~100x quicker than NumPy's threefry, the same bits; but a small draw (a
    bias's) stays NumPy's, cheaper than a whole chunk's run."""
    key, off = _key(6)
    small, n = _chunk_draws.HOST_SMALL, _chunk_draws.HOST_SMALL + 3000
    with scope():
        host = _chunk_draws._host_uniform(n, np.float32, key, off, -0.25, 0.5)
        _chunk_draws._program(np.float32)(key, off, np.uint32(0), -0.25, 0.5)  # made
        drawn = _chunk_draws._host_drawn[0]
        got, _ = _chunk_draws.draw("uniform", n, np.float32, key, off, -0.25, 0.5)
        assert _chunk_draws._host_drawn[0] == drawn  # (no NumPy draw)
        got_small, _ = _chunk_draws.draw("uniform", small, np.float32, key, off, -0.25, 0.5)
        assert _chunk_draws._host_drawn[0] == drawn + small  # (NumPy's)
    np.testing.assert_array_equal(got.view(np.uint32), host.view(np.uint32))
    np.testing.assert_array_equal(got_small.view(np.uint32), host[:small].view(np.uint32))


def test_a_program_is_at_hand_when_made_or_listed(monkeypatch):
    """made(listed=True): held by this process, or listed by the manifest of the script's last
    run (its executable is on disk, being loaded ahead: _program_prefetch)."""
    import jax.numpy as jnp
    f = _programs.jit(_chunk_draws._probe)  # (a torchjax function: the cache names it)
    n = int(np.random.default_rng().integers(6, 10 ** 6))  # (a new size: nothing made)
    args = (jnp.arange(float(n)), jnp.float32(2), jnp.float32(1))
    if _programs._get_store() is None:
        pytest.skip("the program cache is off: nothing is ever listed")
    asked = []
    monkeypatch.setattr(_program_prefetch, "listed", lambda store, k: asked.append(k) or False)
    assert not _programs.made(f, args, listed=True)
    assert asked  # (a program the cache names by a key)
    monkeypatch.setattr(_program_prefetch, "listed", lambda store, k: k == asked[0])
    assert _programs.made(f, args, listed=True)
    monkeypatch.setattr(_program_prefetch, "listed", lambda store, k: False)
    f(*args)
    f(*args)
    from torchjax import _program_soon
    _program_soon.wait_all()
    for _ in range(_host_tier_hot()):
        f(*args)
    _program_soon.wait_all()
    assert _programs.made(f, args, listed=True)


def _host_tier_hot():
    from torchjax import _host_tier
    return _host_tier.HOT + 1
