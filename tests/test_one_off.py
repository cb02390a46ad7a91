"""Arrays of one-off shapes are made without compiling (torchjax/_one_off.py): building a model
and its optimizer state compiles nothing per parameter shape."""

import jax
import numpy as np
import pytest

import torchjax as torch
from torchjax import _one_off


def _programs(fn):
    """How many programs fn made (compiled or loaded from the persistent cache)."""
    torch.compile_stats(reset=True)
    out = fn()
    st = torch.compile_stats()
    return st.compiled + st.cache_hits, out


# shapes no other test uses, so no earlier call has used up their host calls
@pytest.mark.parametrize("make", [
    lambda s: torch.zeros(s), lambda s: torch.ones(s, dtype=torch.int32),
    lambda s: torch.empty(s, dtype=torch.float64), lambda s: torch.zeros_like(torch.empty(s)),
    lambda s: torch.from_numpy(np.full(s, 3, np.int16)),
])
def test_a_new_shape_compiles_nothing(make):
    shape = (3, 1, int(np.random.default_rng().integers(1000, 10**5)))
    programs, t = _programs(lambda: make(shape))
    assert programs == 0 and tuple(t.shape) == shape


def test_a_shape_made_again_and_again_gets_its_program(monkeypatch):
    from torchjax import _host_tier
    # (about the compiled program: the host tier would evaluate its first calls)
    monkeypatch.setattr(_host_tier, "ON", [False])
    shape = (5, int(np.random.default_rng().integers(1000, 10**5)))
    counts = [_programs(lambda: torch.zeros(shape))[0] for _ in range(_one_off.FILL_CALLS + 2)]
    assert counts == [0] * _one_off.FILL_CALLS + [1, 0], counts


def test_values_and_dtypes_match_the_compiled_path():
    for dtype in (torch.float32, torch.bfloat16, torch.complex64, torch.bool, torch.uint8):
        for value in (0, 1):
            shape = (2, 7, 5)
            host = torch.full(shape, value, dtype=dtype) if value else torch.zeros(
                shape, dtype=dtype)
            compiled = torch._creation._filled(shape, value, dtype.np)()
            assert host._data.dtype == compiled.dtype
            assert not host._data.weak_type and not host._data.committed
            np.testing.assert_array_equal(np.asarray(host._data), np.asarray(compiled))


def test_inside_a_trace_the_program_is_traced():
    def f(x):
        return torch.Tensor._wrap(x) + torch.ones(4, 3)

    out = jax.jit(lambda x: f(x)._data)(np.zeros((4, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.ones((4, 3)))


def test_random_parameters_and_optimizer_state_compile_no_program_per_shape():
    widths = [int(w) for w in np.random.default_rng().integers(100, 900, size=9)]

    def build():
        model = torch.nn.Sequential(*[torch.nn.Linear(a, b)
                                      for a, b in zip(widths[:-1], widths[1:])])
        opt = torch.optim.Adam(model.parameters())
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        opt.step()
        return model, opt

    warm = torch.nn.Linear(3, 3)  # the generator's key programs, made once per process
    warm.weight.grad = torch.zeros_like(warm.weight)
    torch.optim.Adam([warm.weight]).step()
    programs, (model, opt) = _programs(build)
    # 8 layers, 16 parameter shapes: a sampler per size class and the Adam step (eager
    # slices and fills were 5 programs per parameter)
    assert programs <= 8
    for p in model.parameters():
        assert opt.state[p]["exp_avg"].shape == p.shape
        assert not opt.state[p]["exp_avg"]._data.committed
        assert float(opt.state[p]["exp_avg_sq"].abs().sum()) == 0.0


def test_tensor_of_a_list_compiles_nothing():
    before = torch.compile_stats()
    t = torch.tensor([[1.5, 2.0], [3.0, 4.0], [5.0, 6.5]])
    i = torch.tensor([1, 2, 3, 4, 5])
    after = torch.compile_stats()
    assert after.traced == before.traced
    assert t.dtype == torch.float32 and i.dtype == torch.int64
    assert not t._data.weak_type and not i._data.weak_type
    assert t.tolist() == [[1.5, 2.0], [3.0, 4.0], [5.0, 6.5]]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "int64",
                                   "uint8", "complex64", "bool"])
@pytest.mark.parametrize("fill", ["ones_", "zeros_", "constant_2.5", "constant_0.1",
                                  "constant_-3", "constant_nan"])
def test_init_fills_match_pytorch(dtype, fill):
    """nn.init's fills are made on the host where NumPy gives the exact value, else by the fill
    program; either way PyTorch's values and dtype."""
    import torch as real

    def run(lib):
        t = lib.zeros(3, 5, dtype=getattr(lib, dtype))
        name, _, val = fill.partition("_")
        init = getattr(lib.nn.init, name + "_")
        try:
            out = init(t, float(val)) if val else init(t)
        except Exception as e:  # noqa: BLE001  (the same error in both)
            return type(e).__name__
        assert out is t
        return t.to(lib.float64).numpy() if dtype != "complex64" else t.numpy()

    got, want = run(torch), run(real)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)


def test_init_fill_of_a_new_shape_compiles_nothing():
    width = int(np.random.default_rng().integers(1000, 10**5))
    norm = torch.nn.LayerNorm(width)  # ones_ and zeros_ of a shape no other test uses
    programs, _ = _programs(lambda: (torch.nn.init.ones_(norm.weight),
                                     torch.nn.init.zeros_(norm.bias),
                                     torch.nn.init.constant_(norm.bias, 0.5)))
    assert programs == 0
    np.testing.assert_array_equal(norm.bias.detach().numpy(), np.full(width, 0.5, np.float32))
    assert norm.weight._version == 2 and norm.bias._version == 3  # (LayerNorm's init made 1 each)


def test_size_class_draws_when_chunks_do_not_serve(monkeypatch):
    """Without chunked draws (a forked worker, another PRNG setting) a one-off shape is cut
    from a draw of its size class: the values are the exact draw's first n."""
    from torchjax import _chunk_draws

    monkeypatch.setattr(_chunk_draws, "serves", lambda np_dtype: False)
    monkeypatch.setattr(_one_off, "_calls", {})
    assert [_one_off.size_class(n) for n in (1, 1024, 1025, 16384, 16385)] == [
        1024, 1024, 16384, 16384, 262144]
    g = torch.Generator().manual_seed(5)
    cut = torch.rand(7, 3, generator=g)
    g.manual_seed(5)
    whole = torch.rand(1024, generator=g)  # the size class's own draw, same key
    np.testing.assert_array_equal(cut.numpy().ravel(), whole.numpy()[:21])
    w = torch.nn.init.trunc_normal_(torch.empty(4, 5), a=-1.0, b=1.0)
    assert w.shape == (4, 5) and float(w.abs().max()) <= 1.0
