"""What unmodified public PyTorch scripts did that torchjax got wrong (docs/real_scripts.md):
each test runs the script's pattern in PyTorch and in torchjax and compares."""

import io

import numpy as np
import torch

import torchjax


def both(fn):
    """fn(lib) for torch and for torchjax."""
    return fn(torch), fn(torchjax)


def test_whole_module_saved_and_loaded_with_safe_globals():
    # word_language_model: torch.save(model, f), then torch.load(f) under
    # serialization.safe_globals([its classes]) (weights_only=True, the default)
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Embedding(5, 3), lib.nn.LSTM(3, 4), lib.nn.Dropout(0.1))
        buf = io.BytesIO()
        lib.save(model, buf)
        buf.seek(0)
        with lib.serialization.safe_globals([lib.nn.Sequential, lib.nn.Embedding, lib.nn.LSTM,
                                             lib.nn.Dropout]):
            loaded = lib.load(buf)
        return [p.detach().numpy() for p in model.parameters()], \
            [p.detach().numpy() for p in loaded.parameters()], type(loaded._parameters)
    (pt_before, pt_after, pt_kind), (tj_before, tj_after, tj_kind) = both(run)
    for a, b in zip(tj_before, tj_after):
        np.testing.assert_array_equal(a, b)
    assert [a.shape for a in pt_after] == [a.shape for a in tj_after]
    assert pt_kind is dict and issubclass(tj_kind, dict)


def test_layers_are_found_where_pytorch_defines_them():
    # word_language_model lists torch.nn.modules.activation.MultiheadAttention and
    # torch.nn.modules.linear.NonDynamicallyQuantizableLinear for torch.load's safe_globals;
    # other scripts test isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
    import importlib
    import inspect
    import pkgutil

    missing = []
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        if info.name.startswith("_"):
            continue  # autograd Functions of PyTorch's own implementation
        theirs = importlib.import_module(f"torch.nn.modules.{info.name}")
        for name, cls in vars(theirs).items():
            if not (inspect.isclass(cls) and cls.__module__ == theirs.__name__):
                continue
            if not hasattr(torchjax.nn, name) and name not in ("_BatchNorm", "_NormBase",
                                                                "_InstanceNorm"):
                continue  # a layer torchjax lacks altogether fails by its own name
            try:
                ours = importlib.import_module(f"torchjax.nn.modules.{info.name}")
            except ImportError:
                ours = None
            if not hasattr(ours, name):
                missing.append(f"{info.name}.{name}")
    assert missing == []
    from torchjax.nn.modules.batchnorm import _BatchNorm
    assert isinstance(torchjax.nn.BatchNorm2d(3), _BatchNorm)
    assert not isinstance(torchjax.nn.InstanceNorm2d(3), _BatchNorm)
    assert (torch.nn.modules.linear.NonDynamicallyQuantizableLinear.__name__
            == torchjax.nn.modules.linear.NonDynamicallyQuantizableLinear.__name__)


def test_accelerator_without_one():
    # pytorch/examples (mnist, vae, dcgan, ...) start with
    # `torch.accelerator.current_accelerator() if torch.accelerator.is_available() else cpu`
    import pytest

    for lib in (torch, torchjax):
        acc = lib.accelerator
        assert acc.is_available() is False
        assert acc.current_accelerator() is None
        assert acc.current_accelerator(check_available=True) is None
        assert acc.device_count() == 0
        with acc.device_index(None):
            pass
        for call in (acc.current_device_index, acc.current_device_idx, acc.synchronize,
                     acc.empty_cache, acc.memory_allocated, acc.max_memory_allocated,
                     acc.memory_stats, acc.reset_peak_memory_stats, acc.get_memory_info,
                     lambda: acc.set_device_index(0), lambda: acc.device_index(0).__enter__()):
            with pytest.raises(RuntimeError, match="Cannot access accelerator device when "
                                                   "none is available"):
                call()


def _from_numpy_of_read_only(lib):
    a = np.ones(3)
    a.flags.writeable = False
    return lib.from_numpy(a)  # the line the warning names


def _as_tensor_of_read_only(lib):
    a = np.ones(3)
    a.flags.writeable = False
    return lib.as_tensor(a)  # the line the warning names


def test_read_only_array_warning_names_the_callers_line():
    # torchvision's ToTensor calls from_numpy on a PIL image's read-only array: PyTorch's
    # warning names that line, torchjax's named one or two frames further up
    import inspect
    import warnings

    from torchjax import _numpy_shared

    for make in (_from_numpy_of_read_only, _as_tensor_of_read_only):
        want = inspect.getsourcelines(make)[1] + 3
        for lib in (torch, torchjax):
            _numpy_shared._READONLY_WARNED[0] = False  # torchjax's is once per process
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                make(lib)
            hits = [w for w in seen if "not writable" in str(w.message)]
            if lib is torch and not hits:
                continue  # PyTorch already warned once in this process
            assert [(w.filename, w.lineno) for w in hits] == [(__file__, want)], lib.__name__


def test_batch_norm_called_twice_before_one_backward():
    # siamese_network runs both inputs through one ResNet, then one backward: the running
    # statistics' update must not invalidate the first call's saved tensors
    x = np.random.RandomState(0).randn(5, 3, 4, 4).astype(np.float32)

    def run(lib):
        bn1, bn2 = lib.nn.BatchNorm2d(3), lib.nn.InstanceNorm2d(3, track_running_stats=True)
        xs = lib.tensor(x, requires_grad=True)
        outs = [bn2(bn1(xs * k)) for k in (1.0, 2.0)]
        (outs[0].sum() + (outs[1] ** 2).sum()).backward()
        versions = [b._version for b in (bn1.running_mean, bn1.running_var,
                                         bn2.running_mean, bn2.running_var)]
        bn1.running_mean.add_(1)  # after saving in eval mode, a write is still caught
        bn1.eval()
        y = bn1(xs)
        bn1.running_var.mul_(2)
        try:
            y.sum().backward()
            caught = None
        except RuntimeError as e:
            caught = "modified by an inplace operation" in str(e)
        return xs.grad.numpy(), bn1.running_mean.numpy(), versions, caught
    (pt_grad, pt_mean, pt_versions, pt_caught), (tj_grad, tj_mean, tj_versions, tj_caught) = \
        both(run)
    np.testing.assert_allclose(tj_grad, pt_grad, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tj_mean, pt_mean, rtol=1e-5)
    assert tj_versions == pt_versions
    assert pt_caught is tj_caught is True


def test_device_kind_predicates():
    # dcgan's forward tests `input.is_cuda or input.is_xpu`
    names = ["is_cuda", "is_cpu", "is_meta", "is_sparse", "is_xpu", "is_mps", "is_ipu", "is_xla",
             "is_mtia", "is_maia", "is_vulkan", "is_mkldnn", "is_quantized", "is_nested"]
    pt, tj = both(lambda lib: [getattr(lib.ones(2), n) for n in names])
    assert tj == pt


def test_variable():
    # older scripts: `from torch.autograd import Variable`; Variable(x, requires_grad=True)
    import warnings

    def run(lib):
        from importlib import import_module
        Variable = import_module(f"{lib.__name__}.autograd").Variable
        x = lib.ones(2)
        v = Variable(x * 3, requires_grad=True)
        (v * v).sum().backward()
        p = Variable(lib.nn.Parameter(lib.ones(1)))
        y = Variable(x * lib.ones(2, requires_grad=True))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            vol = Variable(x, volatile=True)
        try:
            Variable(3)
        except TypeError as e:
            bad = str(e)
        return (v.grad.tolist(), v.is_leaf, type(p) is lib.Tensor, p.requires_grad,
                y.grad_fn is None, y.requires_grad, vol.requires_grad,
                [str(w.message) for w in seen], isinstance(x, Variable), bad)
    pt, tj = both(run)
    assert tj == pt


def test_deprecated_scalar_first_overloads():
    # optimizers of older scripts: p.data.add_(-lr, d_p), exp_avg_sq.addcmul_(1 - b2, g, g)
    import warnings

    def run(lib):
        from torchjax import _deprecated_overloads
        _deprecated_overloads._WARNED[0] = False
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        g = lib.tensor([0.5, 0.25])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            outs = [w.add(3.0, g * 2), lib.add(g, 2.0, g), g.sub(2.0, g), lib.sub(g, 2, g),
                    g.addcmul(0.5, g, g), lib.addcmul(g, 0.5, g, g), g.addcdiv(0.5, g, g),
                    lib.addcdiv(g, 0.5, g, g), g.clone().add_(-0.1, g),
                    g.clone().sub_(0.1, g), g.clone().addcmul_(0.1, g, g),
                    g.clone().addcdiv_(-0.1, g, g + 1)]
        outs[0].sum().backward()
        messages = [str(w.message).split(" (Triggered")[0] for w in seen]
        return [o.tolist() for o in outs], w.grad.tolist(), type(outs[0].grad_fn).__name__, \
            messages
    (pt_vals, pt_grad, pt_fn, pt_msgs), (tj_vals, tj_grad, tj_fn, tj_msgs) = both(run)
    np.testing.assert_allclose(np.array(tj_vals), np.array(pt_vals), rtol=1e-6)
    assert (tj_grad, tj_fn) == (pt_grad, pt_fn)
    # PyTorch warns once per process; its first message, when this test saw it, is ours
    assert len(tj_msgs) == 1 and tj_msgs[0].startswith("This overload of add is deprecated:\n"
                                                       "\tadd(Number alpha, Tensor other)\n")
    assert pt_msgs in ([], tj_msgs)


def test_sdpa_kernel_backend_switch():
    # recent scripts: `with sdpa_kernel(SDPBackend.FLASH_ATTENTION): F.scaled_dot_product_...`
    import importlib

    import pytest

    x = np.arange(16, dtype=np.float32).reshape(1, 2, 2, 4) / 8

    def run(lib):
        att = importlib.import_module(f"{lib.__name__}.nn.attention")
        B = att.SDPBackend
        names = list(B.__members__)
        facts = (repr(B.MATH), str(B.MATH), B.MATH.name, int(B.EFFICIENT_ATTENTION),
                 B.FLASH_ATTENTION == 1)
        q = lib.tensor(x)
        with att.sdpa_kernel(B.FLASH_ATTENTION):
            out = lib.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        with att.sdpa_kernel([B.FLASH_ATTENTION, B.MATH], set_priority=True):
            pass
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend "
                                                 "or a list of SDPBackend instances, got str"):
            with att.sdpa_kernel("flash"):
                pass
        return names, facts, out.numpy()
    (pt_names, pt_facts, pt_out), (tj_names, tj_facts, tj_out) = both(run)
    assert (tj_names, tj_facts) == (pt_names, pt_facts)
    np.testing.assert_allclose(tj_out, pt_out, rtol=1e-6)


def _flex_inputs(lib):
    B, H, L, D = 2, 4, 10, 8
    n = B * H * L * D
    q = lib.linspace(-1, 1, n).reshape(B, H, L, D).sin()
    k = lib.linspace(-2, 1, n).reshape(B, H, L, D).cos()
    v = lib.linspace(-1, 3, n).reshape(B, H, L, D)
    return q, k, v


def test_flex_attention_against_pytorch(monkeypatch):
    # newer scripts: torch.nn.attention.flex_attention with a score_mod (relative position, a
    # per-head bias indexed by h) and a causal block mask
    import importlib

    # (PyTorch's eager flex_attention goes through dynamo, which turns PyTorch's distribution
    # argument checks off for the whole process: tests/distributions/test_validation.py, run
    # after this in the same worker, then found PyTorch accepting every bad argument)
    monkeypatch.setattr(torch.distributions.Distribution, "_validate_args",
                        torch.distributions.Distribution._validate_args)
    import warnings

    def run(lib):
        fa = importlib.import_module(f"{lib.__name__}.nn.attention.flex_attention")
        q, k, v = _flex_inputs(lib)
        bias = lib.arange(4, dtype=lib.float32) / 4

        def causal(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx

        def rel(score, b, h, q_idx, kv_idx):
            return score + 0.1 * (q_idx - kv_idx) + bias[h]

        def first_only(b, h, q_idx, kv_idx):  # rows 1.. attend to nothing: zeros
            return q_idx == 0

        bm = fa.create_block_mask(causal, None, None, 10, 10, device="cpu", BLOCK_SIZE=4)
        masks = [fa.create_mask(causal, 1, 1, 4, 4, device="cpu"),
                 fa.create_mask(fa.and_masks(causal, lambda b, h, q, k: k >= 1), 1, 1, 3, 3),
                 fa.create_mask(fa.or_masks(causal, lambda b, h, q, k: k == 2), 1, 1, 3, 3),
                 fa.create_mask(fa.noop_mask, 1, 2, 2, 2)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch: "called without torch.compile()"
            outs = [fa.flex_attention(q, k, v),
                    fa.flex_attention(q, k, v, score_mod=rel, block_mask=bm),
                    fa.flex_attention(q, k[:, :2], v[:, :2], enable_gqa=True),
                    fa.flex_attention(q, k, v, block_mask=fa.create_block_mask(
                        first_only, 2, 4, 10, 10, device="cpu"))]
            out, aux = fa.flex_attention(q, k, v, score_mod=rel, scale=0.5,
                                         return_aux=fa.AuxRequest(lse=True))
        return (bm.shape, bm.sparsity(), bm.BLOCK_SIZE, bm.to_dense().numpy(),
                [m.numpy() for m in masks],
                [o.numpy() for o in outs + [out, aux.lse]], aux.max_scores)
    pt, tj = both(run)
    assert pt[:3] == tj[:3]
    np.testing.assert_array_equal(tj[3], pt[3])
    assert tj[3].dtype == pt[3].dtype
    for a, b in zip(tj[4], pt[4]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(tj[5], pt[5]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    assert pt[6] is None and tj[6] is None


def test_flex_attention_gradients():
    # PyTorch's CPU build refuses flex_attention's backward; torchjax differentiates it:
    # compared with the same attention written out in PyTorch
    from torchjax.nn.attention.flex_attention import AuxRequest, create_block_mask, flex_attention

    def rel(score, b, h, q_idx, kv_idx):
        return score * (1 + h) / 4 - 0.1 * (q_idx - kv_idx).abs()

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    q, k, v = (t.requires_grad_() for t in _flex_inputs(torchjax))
    out, aux = flex_attention(q, k, v, score_mod=rel,
                              block_mask=create_block_mask(causal, None, None, 10, 10),
                              return_aux=AuxRequest(max_scores=True))
    out.pow(2).sum().backward()
    pq, pk, pv = (t.requires_grad_() for t in _flex_inputs(torch))
    h = torch.arange(4).reshape(1, 4, 1, 1)
    i = torch.arange(10)
    s = (pq @ pk.transpose(-2, -1)) / 8 ** 0.5 * (1 + h) / 4 - 0.1 * (i[:, None] - i).abs()
    s = s.masked_fill(i[:, None] < i, float("-inf"))
    (s.softmax(-1) @ pv).pow(2).sum().backward()
    assert aux.lse is None  # (PyTorch's CPU build cannot return max_scores either)
    np.testing.assert_allclose(aux.max_scores.detach().numpy(), s.amax(-1).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    for a, b in ((q, pq), (k, pk), (v, pv)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_float8_dtypes():
    # newer scripts name torch.float8_e4m3fn and friends (scaled matmuls): conversions to and
    # from them, finfo, printing, and the refusal to promote them with anything else
    import pytest

    x = [1.3, -2.7, 448., 500., 1e-3, float("inf"), float("nan")]

    def run(lib):
        names = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
        facts = []
        for name in names:
            d = getattr(lib, name)
            y = lib.tensor(x).to(d)
            fi = lib.finfo(d)
            facts.append((repr(d), d.is_floating_point, d.is_signed, d.itemsize, str(y),
                          y.float().tolist(), str(fi), y[1:3].tolist(), y.dtype is d))
        y = lib.tensor(x).to(lib.float8_e4m3fn)
        with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported, "
                                               "attempted to promote Float8_e4m3fn and Float"):
            y + lib.tensor(x)
        return facts, str(lib.zeros(2, dtype=lib.float8_e5m2)), lib.cat([y, y]).float().tolist()
    pt, tj = both(run)
    assert str(tj) == str(pt)


def test_xpu_and_mps_modules_answer_as_pytorch_without_them():
    # `torch.xpu.is_available()` / `torch.mps...` checks in device-selection code
    import importlib

    calls = [("is_available",), ("device_count",), ("manual_seed", 0), ("empty_cache",),
             ("memory_allocated",), ("is_bf16_supported",), ("synchronize",),
             ("current_device",), ("get_device_name",)]
    mps_calls = [("is_available",), ("device_count",), ("manual_seed", 0), ("synchronize",),
                 ("empty_cache",), ("current_allocated_memory",), ("seed",)]

    def run(lib):
        out = []
        for mod, names in (("xpu", calls), ("mps", mps_calls)):
            m = importlib.import_module(f"{lib.__name__}.{mod}")
            for name, *args in names:
                try:
                    out.append(repr(getattr(m, name)(*args)))
                except Exception as e:  # noqa: BLE001 - the errors are what is compared
                    out.append(f"{type(e).__name__}: {e}")
            if mod == "xpu":
                try:
                    with m.device(0):
                        pass
                except NotImplementedError as e:
                    out.append(str(e))
        return out
    pt, tj = both(run)
    assert tj == pt


def test_split_pieces_of_a_from_numpy_tensor_are_not_recomputed(monkeypatch):
    # time_sequence_prediction: `for input_t in input.split(1, dim=1)` over a from_numpy
    # tensor; each of the 999 pieces re-ran the whole split when first read (35 s of a 36 s
    # first closure). A piece reads its root again only once the array was written.
    from torchjax import _numpy_shared

    calls = []
    real = _numpy_shared.read_through
    monkeypatch.setattr(_numpy_shared, "read_through",
                        lambda chain, base: calls.append(1) or real(chain, base))

    def run(lib, count):
        a = np.arange(12.).reshape(3, 4)
        t = lib.from_numpy(a)
        pieces = t.split(1, dim=1)
        before = [p.sum().item() for p in pieces]
        n = len(calls)
        a[0, 0] = 100.0  # written after the split: the pieces see it
        after = [p.sum().item() for p in pieces]
        if count:
            assert n == 0 and len(calls) == 4
        return before, after
    assert run(torch, False) == run(torchjax, True)


def test_whole_module_saved_by_torchjax_loads_in_pytorch(tmp_path):
    # MorvanZhou's 304_save_reload: torch.save(net, f) then torch.load(f). The module's classes
    # are written under PyTorch's names (torch.nn.modules.linear.Linear), so PyTorch loads
    # the file and refuses it by default with the same message
    import pytest

    net = torchjax.nn.Sequential(torchjax.nn.Linear(2, 3), torchjax.nn.ReLU())
    path = tmp_path / "net.pt"
    torchjax.save(net, path)
    loaded = torch.load(path, weights_only=False)
    assert type(loaded[0]) is torch.nn.Linear
    np.testing.assert_array_equal(loaded[0].weight.detach().numpy(),
                                  net[0].weight.detach().numpy())
    messages = []
    for lib in (torch, torchjax):
        with pytest.raises(Exception) as info:
            lib.load(path)
        messages.append(str(info.value).splitlines()[-3])
    assert messages[0] == messages[1]
    assert "GLOBAL torch.nn.modules.container.Sequential was not" in messages[1]
    with torchjax.serialization.safe_globals([torchjax.nn.Sequential, torchjax.nn.Linear,
                                              torchjax.nn.ReLU]):
        assert type(torchjax.load(path)[0]) is torchjax.nn.Linear


def test_numpy_keyword_names():
    # karpathy's makemore lectures: `counts.sum(1, keepdims=True)`; NumPy habits: axis=. PyTorch
    # takes axis for dim and keepdims for keepdim wherever an op has them
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def run(lib):
        t = lib.tensor(x)
        outs = [t.sum(1, keepdims=True), lib.sum(t, axis=0, keepdims=True), t.mean(axis=1),
                lib.cat([t, t], axis=0), t.max(axis=1).values, t.softmax(axis=1),
                lib.std(t, axis=1, keepdims=True), t.amax(axis=1, keepdims=True),
                t.argmax(axis=1), t.squeeze(axis=0), lib.stack([t, t], axis=1),
                lib.gather(t, axis=1, index=lib.zeros(2, 1, dtype=lib.long)),
                t.median(axis=1).values, t.sort(axis=1).indices,
                lib.mean(t, axis=(0, 1))]
        errors = []
        for call in (lambda: lib.softmax(t), lambda: t.sum(1, axis=1)):
            try:
                call()
            except TypeError as e:
                errors.append(str(e))
        return [o.numpy() for o in outs], errors
    (pt, pt_err), (tj, tj_err) = both(run)
    for a, b in zip(tj, pt):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        assert a.shape == b.shape
    assert tj_err[0] == pt_err[0] == 'softmax() missing 1 required positional arguments: "dim"'
    assert len(pt_err) == len(tj_err) == 2  # (PyTorch: "unexpected keyword argument 'axis'")


def test_augmented_assignment_on_an_index(monkeypatch):
    # makemore lecture 1: `N[ix1, ix2] += 1` for every bigram. Python runs x[k] = x[k] after the
    # view's in-place add, which already wrote through: that copy is skipped (versions still
    # move as PyTorch's), real writes and recorded ones are not
    from torchjax._ops import indexing

    writes = []
    real = indexing._D.dispatch_inplace
    monkeypatch.setattr(indexing._D, "dispatch_inplace",
                        lambda *a: writes.append(a) or real(*a))

    def run(lib):
        N = lib.zeros((4, 5), dtype=lib.int32)
        v0 = N._version
        for i in range(7):
            N[i % 4, (i * 3) % 5] += 1
        N[1] += 2
        N[:, 2] *= 3
        N[1:3, 1:3] -= 1
        row = N[2]
        row[1] += 5
        n_self = len(writes)
        x = lib.arange(6.0).reshape(2, 3)
        x[0] = x[1]  # a view of another row: a real write
        w = lib.ones(3, requires_grad=True)
        z = w * 2
        z[1] += 1  # recorded: CopySlices
        z.sum().backward()
        return (N.tolist(), N._version - v0, x.tolist(), x._version, z.grad_fn.name(),
                w.grad.tolist(), n_self, len(writes) - n_self)
    pt, tj = run(torch), run(torchjax)
    assert pt[:6] == tj[:6]
    assert tj[6] == 0 and tj[7] == 2


def test_new_factories_take_size_by_keyword():
    # flex_attention's noop_mask (PyTorch's own code, copied into scripts): b.new_ones(size=())
    def run(lib):
        t = lib.ones(2, dtype=lib.float64)
        outs = [t.new_ones(size=()), t.new_zeros(size=(2, 3)), t.new_empty(size=(1,)).shape,
                t.new_ones(2, 2), t.new_zeros((1, 2)), t.new_ones(size=(), dtype=lib.bool)]
        try:
            t.new_zeros(2, size=(3,))
        except TypeError as e:
            outs.append(str(e))
        return str(outs)
    pt, tj = both(run)
    assert tj == pt


def test_view_as_another_dtype():
    # float8 and bit-manipulation code: x.view(torch.uint8), b.view(torch.int16); a view whose
    # writes reach the base, no autograd, PyTorch's errors for sizes that do not fit
    def run(lib):
        x = lib.tensor([1.0, -2.0, 0.5])
        b = lib.arange(8, dtype=lib.uint8)
        outs = [x.view(lib.int32), x.view(lib.int16), b.view(lib.int16), b.view(lib.float32),
                x.view(dtype=lib.int32), lib.tensor([True, False]).view(lib.uint8),
                lib.tensor([1.5, 300.0]).to(lib.float8_e4m3fn).view(lib.uint8)]
        v = x.view(lib.uint8)
        v[4:8] = lib.tensor([0, 0, 128, 63], dtype=lib.uint8)  # -2.0 becomes 1.0 in x
        m = lib.arange(12, dtype=lib.int32).reshape(3, 4)
        w = lib.ones(3, requires_grad=True)
        facts = [x.tolist(), m.view(lib.int16).stride(), m[1:].view(lib.uint8).storage_offset(),
                 w.view(lib.float32).requires_grad]
        facts.append(tuple(x.view(size=(3, 1)).shape))
        for bad in (lambda: w.view(lib.float64), lambda: lib.tensor(1.0).view(lib.uint8),
                    lambda: lib.ones(3, 2).t().view(lib.uint8), lambda: x.view(),
                    lambda: x.view(lib.float32, 3)):
            try:
                bad()
            except (RuntimeError, TypeError) as e:
                facts.append(f"{type(e).__name__}: {e}")
        return [o.tolist() for o in outs], [str(o.dtype) for o in outs], facts
    pt, tj = both(run)
    assert tj == pt


def test_permute_by_a_sequence_then_reshape():
    # lucidrains/vit-pytorch through einops: rearrange is x.reshape(list), x.permute(list),
    # x.reshape(list); the permuted view's strides failed to resolve ("'<' not supported
    # between instances of 'tuple' and 'int'") for a sequence of dims, so every model failed
    def run(lib):
        x = lib.arange(2 * 6 * 8 * 3, dtype=lib.float32).reshape(2, 6, 8, 3)
        outs = []
        for dims in ([0, 2, 1, 3], (3, 0, 2, 1)):
            y = x.permute(dims)
            outs.append((y.stride(), y.is_contiguous(), y.reshape([y.shape[0], -1]).numpy(),
                         lib.permute(x, dims).stride()))
        b, c, h, w = 2, 3, 4, 4  # "b c (h p1) (w p2) -> b (h w) (p1 p2 c)" with p1 = p2 = 2
        img = lib.arange(b * c * 8 * 8, dtype=lib.float32).reshape(b, c, 8, 8)
        t = img.reshape([b, c, h, 2, w, 2]).permute([0, 2, 4, 3, 5, 1]).reshape([b, h * w, 12])
        return outs, t.numpy(), t.stride()
    pt, tj = both(run)
    for (s1, c1, v1, f1), (s2, c2, v2, f2) in zip(pt[0], tj[0]):
        assert (s1, c1, f1) == (s2, c2, f2)
        np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(pt[1], tj[1])
    assert pt[2] == tj[2]


def test_pad_widths_given_as_one_element_integer_tensors():
    # x-transformers' align_right: F.pad(t, (lens.amax(), 0), value=pad_id): PyTorch's parser
    # takes a one-element integer tensor where a tuple of ints wants an int; a float one it
    # refuses as torchjax did every tensor
    def run(lib):
        x = lib.arange(6).reshape(2, 3)
        lens = lib.tensor([1, 3])
        out = [lib.nn.functional.pad(x, (lens.amax(), 0), value=-1).numpy(),
               lib.nn.functional.pad(x, (lib.tensor([1]), lib.tensor(2))).numpy()]
        try:
            lib.nn.functional.pad(x, (lib.tensor(1.0), 0))
        except TypeError as e:
            out.append(str(e))
        return out
    pt, tj = both(run)
    np.testing.assert_array_equal(pt[0], tj[0])
    np.testing.assert_array_equal(pt[1], tj[1])
    assert pt[2] == tj[2]
