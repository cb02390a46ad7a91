"""The int64/float64 policy of accelerators (_device_dtypes.py), forced on for the CPU: longs
stored as int32 still report torch.int64 and compute PyTorch's values; float64 is refused
with an error naming the policy."""

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _device_dtypes


@pytest.fixture
def long32():
    saved = dict(_device_dtypes.STATE.policy)
    torchjax.backends.xla.set_dtype_policy("cpu", long="int32", double="error")
    try:
        yield
    finally:
        _device_dtypes.STATE.policy = saved
        _device_dtypes._refresh()


def _program(t):
    """Index arithmetic, reductions, indexing and casts on longs; the results by name."""
    F = t.nn.functional
    x = t.tensor([[1.0, 5.0, 2.0], [0.0, -1.0, 3.0], [4.0, 4.5, -2.0]])
    i = t.arange(3)
    j = t.tensor([2, 0, 1])
    out = {"i": i, "j_plus_1": j + 1, "sum": (i * j).sum(), "argmax": x.argmax(1),
           "index": x[j], "gather": x.gather(1, j[:, None]), "cumsum": j.cumsum(0),
           "where": t.where(j > 0, j, i), "int32": j.to(t.int32),
           "int32_plus_int32": j.int() + j.int(), "int32_plus_long": j.int() + j,
           "long0d_plus_int32": t.tensor(5) + j.int(), "float": j.float() * 0.5,
           "one_hot": F.one_hot(j, 3), "zeros_long": t.zeros(2, dtype=t.long),
           "full": t.full((2,), 7), "cross_entropy": F.cross_entropy(x, j),
           "topk": x.topk(2, dim=1).indices, "sort": x.sort(1).indices, "unique": j.unique()}
    k = j.clone()
    k.add_(3)
    k[0] = 9
    out["inplace"] = k
    return out


def test_longs_report_int64_and_compute_pytorchs_values(long32):
    want = _program(torch)
    got = _program(torchjax)
    for name, w in want.items():
        g = got[name]
        assert str(g.dtype) == str(w.dtype), (name, g.dtype, w.dtype)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, err_msg=name)
        assert g.numpy().dtype == w.numpy().dtype, name
        if w.dtype == torch.int64:  # stored narrow: the point of the policy
            assert g._data.dtype == np.int32, (name, g._data.dtype)
    assert got["i"].tolist() == [0, 1, 2] and repr(got["sum"]) == "tensor(2)"


def test_overflow_and_float64_are_refused_by_name(long32):
    with pytest.raises(RuntimeError, match="cannot be converted to type int32 without "
                                           "overflow.*long='int32'"):
        torchjax.tensor([1, 2**40])
    x = torchjax.ones(2)
    for make in (lambda: torchjax.zeros(2, dtype=torchjax.float64), lambda: x.double(),
                 lambda: torchjax.tensor([1.0], dtype=torchjax.float64)):
        with pytest.raises(RuntimeError, match="torch.float64 is not supported.*double='error'"):
            make()


def test_policy_switches(long32):
    assert torchjax.backends.xla.get_dtype_policy("cpu") == {"long": "int32",
                                                             "double": "error"}
    torchjax.backends.xla.set_dtype_policy("cpu", long="int64", double="keep")
    assert not _device_dtypes.STATE.on or _device_dtypes.STATE.policy["tpu"] != (
        "int64", "keep")
    assert torchjax.arange(3)._data.dtype == np.int64
    assert torchjax.zeros(1, dtype=torchjax.float64).dtype is torchjax.float64
    with pytest.raises(ValueError, match="long='int16'"):
        torchjax.backends.xla.set_dtype_policy("cpu", long="int16")
    # TPU's default: 32-bit longs and no float64, as PyTorch/XLA users know them
    assert torchjax.backends.xla.get_dtype_policy("tpu")["double"] == "error"


def test_training_with_long_labels(long32):
    """An embedding and a classifier trained on long indices and labels match PyTorch."""
    def run(t):
        t.manual_seed(0)
        emb = t.nn.Embedding(6, 4)
        head = t.nn.Linear(4, 3)
        with t.no_grad():
            emb.weight.copy_(t.arange(24.0).reshape(6, 4) / 24)
            head.weight.copy_(t.arange(12.0).reshape(3, 4) / 12 - 0.5)
            head.bias.zero_()
        params = list(emb.parameters()) + list(head.parameters())
        idx, y = t.tensor([[0, 5], [3, 2]]), t.tensor([2, 0])
        for _ in range(2):  # plain SGD by hand (torch.optim's first use imports dynamo: 12 s)
            for p in params:
                p.grad = None
            loss = t.nn.functional.cross_entropy(head(emb(idx).mean(1)), y)
            loss.backward()
            with t.no_grad():
                for p in params:
                    p -= 0.5 * p.grad
        return loss.item(), emb.weight.detach().numpy()
    (lw, ww), (lg, wg) = run(torch), run(torchjax)
    np.testing.assert_allclose(lg, lw, rtol=1e-5)
    np.testing.assert_allclose(wg, ww, rtol=1e-5, atol=1e-6)


def test_pytorch_xla_variable_sets_the_accelerators_defaults(monkeypatch):
    monkeypatch.setenv("XLA_USE_32BIT_LONG", "1")
    got = _device_dtypes._defaults()
    assert got["gpu"] == ("int32", "keep") and got["tpu"] == ("int32", "error")
    assert got["cpu"] == ("int64", "keep")
    monkeypatch.setenv("XLA_USE_32BIT_LONG", "0")  # opting out on TPUs
    assert _device_dtypes._defaults()["tpu"] == ("int64", "error")


def test_compiled_results_keep_the_long_tag(long32):
    j = torchjax.tensor([2, 0, 1])

    @torchjax.compile
    def f(j):
        return j + 1, (j * 2).float()

    for _ in range(2):  # the trace, then the program
        a, b = f(j)
        assert a.dtype == torchjax.int64 and a._data.dtype == np.int32
        assert b.dtype == torchjax.float32
        np.testing.assert_array_equal(a.numpy(), [3, 1, 2])
        assert a.numpy().dtype == np.int64


def _out_forms(t):
    """out= calls writing into long tensors (one resized), and a float out of longs."""
    j, i32 = t.tensor([2, 0, 1]), t.tensor([1, 2, 3], dtype=t.int32)
    outs = {"long_long": t.empty(3, dtype=t.long), "int32_into_long": t.empty(3, dtype=t.long),
            "resized": t.empty(0, dtype=t.long), "sum": t.empty((), dtype=t.long),
            "float": t.empty(3)}
    t.add(j, j, out=outs["long_long"])
    t.add(i32, i32, out=outs["int32_into_long"])
    t.mul(i32, 2, out=outs["resized"])
    t.sum(j, 0, out=outs["sum"])
    t.mul(j, 0.5, out=outs["float"])
    return outs


def test_out_variants_keep_longs_stored_as_int32(long32):
    want, got = _out_forms(torch), _out_forms(torchjax)
    for name, w in want.items():
        g = got[name]
        assert str(g.dtype) == str(w.dtype) and g.tolist() == w.tolist(), name
        if w.dtype == torch.int64:
            assert g._data.dtype == np.int32, (name, g._data.dtype)


def test_sizes_are_those_of_the_reported_dtype(long32):
    for make in (lambda t: t.arange(5), lambda t: t.zeros(2, 3, dtype=t.long)):
        g, w = make(torchjax), make(torch)
        assert g._data.dtype == np.int32
        assert (g.itemsize, g.element_size(), g.nbytes) == (w.itemsize, w.element_size(),
                                                            w.nbytes)


def test_save_writes_longs_as_int64(long32):
    import io
    base = torchjax.tensor([[1, -2, 3], [2 ** 31 - 1, 0, -(2 ** 31)]])
    buf = io.BytesIO()
    torchjax.save({"base": base, "row": base[1], "n": torchjax.tensor(7)}, buf)
    buf.seek(0)
    read = torch.load(io.BytesIO(buf.getvalue()))  # PyTorch reads the file as it wrote it
    assert read["base"].dtype == torch.int64 and read["base"].tolist() == base.tolist()
    assert read["row"].tolist() == base[1].tolist() and read["n"].item() == 7
    back = torchjax.load(buf)
    assert back["base"].dtype == torchjax.int64 and back["base"].tolist() == base.tolist()
    assert back["row"].tolist() == base[1].tolist()
