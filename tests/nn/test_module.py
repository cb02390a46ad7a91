"""nn.Module's behaviour and the Linear-family layers against PyTorch: registration and its
errors, traversal, state_dict / load_state_dict, modes, conversions, hooks, repr, pickling;
Identity, Linear, Bilinear and LazyLinear outputs, gradients, state_dicts and reprs."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)
RNG = np.random.default_rng(0)


def _error(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value)


def same_error(fn):
    """fn(lib) raises the same exception type and message in both libraries."""
    expected, got = (_error(fn, lib) for lib in LIBS)
    assert got == expected


def to_jax_state(sd):
    return OrderedDict((k, torchjax.tensor(v.detach().numpy())) for k, v in sd.items())


def copy_weights(tm, jm):
    jm.load_state_dict(to_jax_state(tm.state_dict()))


def make_net(lib):
    """A model with a shared parameter and module, buffers of both kinds and a None slot."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.register_buffer("steps", lib.zeros((), dtype=lib.int64))
            self.register_buffer("cache", lib.ones(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.lin(x).relu()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.scale = nn.Parameter(lib.ones(4))
            self.head = nn.Linear(4, 2)
            self.tied = self.block  # the same module twice
            self.head2 = nn.Linear(4, 2)
            self.head2.weight = self.head.weight  # a shared parameter

        def forward(self, x):
            return self.head(self.block(x) * self.scale)

    return Net()


# -- registration -----------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    "param_tensor", "param_int", "module_int", "buffer_int", "register_param_dot",
    "register_param_empty", "register_param_exists", "register_param_tensor",
    "register_param_name_type", "register_buffer_dot", "register_buffer_empty",
    "register_buffer_exists", "register_buffer_int", "add_module_dot", "add_module_empty",
    "add_module_exists", "add_module_int", "param_before_init", "module_before_init",
    "buffer_before_init", "init_args", "init_kwargs", "no_forward", "missing_attr",
    "train_mode", "to_int", "delattr_missing",
])
def test_registration_errors(case):
    def fn(lib):
        m = lib.nn.Linear(2, 3)
        m.register_buffer("buf", lib.zeros(2))
        m.sub = lib.nn.ReLU()
        t = lib.zeros(3, 2)
        p = lib.nn.Parameter(lib.zeros(2))
        cases = {
            "param_tensor": lambda: setattr(m, "weight", t),
            "param_int": lambda: setattr(m, "weight", 3),
            "module_int": lambda: setattr(m, "sub", 3),
            "buffer_int": lambda: setattr(m, "buf", "x"),
            "register_param_dot": lambda: m.register_parameter("a.b", p),
            "register_param_empty": lambda: m.register_parameter("", p),
            "register_param_exists": lambda: m.register_parameter("buf", p),
            "register_param_tensor": lambda: m.register_parameter("x", t),
            "register_param_name_type": lambda: m.register_parameter(3, p),
            "register_buffer_dot": lambda: m.register_buffer("a.b", t),
            "register_buffer_empty": lambda: m.register_buffer("", t),
            "register_buffer_exists": lambda: m.register_buffer("weight", t),
            "register_buffer_int": lambda: m.register_buffer("x", 3),
            "add_module_dot": lambda: m.add_module("a.b", lib.nn.ReLU()),
            "add_module_empty": lambda: m.add_module("", lib.nn.ReLU()),
            "add_module_exists": lambda: m.add_module("weight", lib.nn.ReLU()),
            "add_module_int": lambda: m.add_module("x", 3),
            "param_before_init": lambda: _early(lib, lambda s: setattr(s, "w", p)),
            "module_before_init": lambda: _early(lib, lambda s: setattr(s, "m", lib.nn.ReLU())),
            "buffer_before_init": lambda: _early(lib, lambda s: s.register_buffer("b", t)),
            "init_args": lambda: lib.nn.Module(3),
            "init_kwargs": lambda: lib.nn.Module(a=3),
            "no_forward": lambda: lib.nn.Module()(t),
            "missing_attr": lambda: m.foo,
            "train_mode": lambda: m.train("yes"),
            "to_int": lambda: m.to(lib.int64),
            "delattr_missing": lambda: delattr(m, "nothing"),
        }
        cases[case]()
    same_error(fn)


def _early(lib, assign):
    class Early(lib.nn.Module):
        def __init__(self):
            assign(self)
            super().__init__()
    Early()


def test_assignment_moves_names_between_kinds():
    for lib in LIBS:
        m = lib.nn.Module()
        m.x = lib.nn.ReLU()
        m.x = lib.nn.Parameter(lib.ones(2))  # a parameter replaces the module
        assert "x" in m._parameters and "x" not in m._modules
        m.x = None  # still the parameter slot
        assert m._parameters["x"] is None and list(m.state_dict()) == []
        m.register_buffer("b", lib.ones(2))
        m.b = lib.zeros(3)  # a tensor assigned to a buffer name stays a buffer
        assert m._buffers["b"].shape == (3,)
        m.nb = lib.nn.Buffer(lib.ones(1), persistent=False)
        assert "nb" in m._buffers and "nb" in m._non_persistent_buffers_set
        assert type(m.nb) is lib.Tensor and isinstance(m.nb, lib.nn.Buffer)
        m.nb = lib.zeros(2)  # keeps being non-persistent
        assert list(m.state_dict()) == ["b"]
        del m.b
        assert "b" not in m._buffers
        m.plain = 3
        assert m.__dict__["plain"] == 3


# -- traversal --------------------------------------------------------------------------------

def test_traversal_matches():
    tm, jm = make_net(torch), make_net(torchjax)

    def names(m):
        return {
            "params": [n for n, _ in m.named_parameters()],
            "params_all": [n for n, _ in m.named_parameters(remove_duplicate=False)],
            "params_prefixed": [n for n, _ in m.named_parameters(prefix="model")],
            "params_local": [n for n, _ in m.named_parameters(recurse=False)],
            "n_params": len(list(m.parameters())),
            "buffers": [n for n, _ in m.named_buffers()],
            "buffers_local": [n for n, _ in m.block.named_buffers(recurse=False)],
            "children": [n for n, _ in m.named_children()],
            "n_children": len(list(m.children())),
            "modules": [n for n, _ in m.named_modules()],
            "modules_all": [n for n, _ in m.named_modules(remove_duplicate=False)],
            "modules_prefixed": [n for n, _ in m.named_modules(prefix="root")],
            "n_modules": len(list(m.modules())),
            "memo": [n for n, _ in m.named_modules(memo={m.block})],
            "apply": _apply_order(m),
        }

    assert names(jm) == names(tm)


def _apply_order(m):
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    return seen


def test_get_and_set_submodule():
    def paths(lib):
        m = make_net(lib)
        m.set_submodule("block.act", lib.nn.Tanh())
        m.set_submodule("head", lib.nn.Identity(), strict=True)
        return (type(m.get_submodule("block.lin")).__name__, tuple(m.get_parameter(
            "block.lin.bias").shape), m.get_buffer("block.steps").dtype.is_floating_point,
            type(m.block.act).__name__, type(m.head).__name__, m.get_submodule("") is m)
    assert paths(torchjax) == paths(torch)
    for bad in (lambda m, nn: m.get_submodule("block.nothing"),
                lambda m, nn: m.get_submodule("scale"),
                lambda m, nn: m.get_parameter("block.steps"),
                lambda m, nn: m.get_parameter("block.lin.nothing"),
                lambda m, nn: m.get_buffer("block.lin.weight"),
                lambda m, nn: m.get_buffer("block.nothing"),
                lambda m, nn: m.set_submodule("", nn.ReLU()),
                lambda m, nn: m.set_submodule("block.x", 3),
                lambda m, nn: m.set_submodule("block.new", nn.ReLU(), strict=True),
                lambda m, nn: m.set_submodule("scale", nn.ReLU())):
        same_error(lambda lib, bad=bad: bad(make_net(lib), lib.nn))


# -- state dicts ------------------------------------------------------------------------------

def test_state_dict_keys_values_and_metadata():
    tm, jm = make_net(torch), make_net(torchjax)
    copy_weights(tm, jm)
    tsd, jsd = tm.state_dict(), jm.state_dict()
    assert list(jsd) == list(tsd)
    for k in tsd:
        np.testing.assert_array_equal(jsd[k].numpy(), tsd[k].numpy())
        assert not jsd[k].requires_grad
    assert dict(jsd._metadata) == dict(tsd._metadata)
    kept = jm.state_dict(keep_vars=True)
    assert kept["scale"] is jm.scale and kept["scale"].requires_grad
    assert list(jm.state_dict(prefix="net.")) == list(tm.state_dict(prefix="net."))
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        assert list(jm.state_dict(OrderedDict(), "p.")) == ["p." + k for k in tsd]


def test_load_state_dict_results_and_messages():
    for lib in LIBS:
        m = lib.nn.Linear(2, 3)
        res = m.load_state_dict(m.state_dict())
        assert repr(res) == "<All keys matched successfully>"
    results = []
    for lib in LIBS:
        m = lib.nn.Linear(2, 3)
        sd = {"weight": lib.zeros(3, 2), "extra": lib.zeros(1)}
        res = m.load_state_dict(sd, strict=False)
        results.append((repr(res), res.missing_keys, res.unexpected_keys,
                        m.weight.detach().numpy().tolist()))
    assert results[0] == results[1]

    def bad_load(lib):
        m = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU())
        m.load_state_dict({"0.weight": lib.zeros(3, 4), "0.other": lib.zeros(1)})
    same_error(bad_load)
    same_error(lambda lib: lib.nn.Linear(2, 3).load_state_dict(
        {"weight": lib.zeros(2, 2), "bias": lib.zeros(3)}, strict=False))
    same_error(lambda lib: lib.nn.Linear(2, 3).load_state_dict(
        {"weight": np.zeros((3, 2)), "bias": lib.zeros(3)}))
    same_error(lambda lib: lib.nn.Linear(2, 3).load_state_dict([("weight", lib.zeros(3, 2))]))


def test_load_state_dict_is_all_or_nothing():
    m = torchjax.nn.Sequential(torchjax.nn.Linear(2, 2), torchjax.nn.Linear(2, 3))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    bad = {k: torchjax.zeros(v.shape) for k, v in before.items()}
    bad["1.weight"] = torchjax.zeros(4, 4)
    with pytest.raises(RuntimeError, match=r"size mismatch for 1.weight: copying a param with "
                                           r"shape torch.Size\(\[4, 4\]\) from checkpoint"):
        m.load_state_dict(bad)
    del bad["1.weight"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "1.weight"'):
        m.load_state_dict(bad, assign=True)
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())
    assert isinstance(m[0].weight, torchjax.nn.Parameter)


def test_load_state_dict_copy_and_assign():
    m = torchjax.nn.Linear(2, 3)
    w = m.weight
    m.load_state_dict({"weight": torchjax.ones(3, 2, dtype=torchjax.float64),
                       "bias": torchjax.ones(3)})
    assert m.weight is w and w.dtype == torchjax.float32 and w._version > 0
    src = torchjax.full((3, 2), 2.0)
    m.load_state_dict({"weight": src, "bias": torchjax.ones(3)}, assign=True)
    assert m.weight is not w and isinstance(m.weight, torchjax.nn.Parameter)
    assert m.weight.requires_grad and float(m.weight.sum()) == 12.0
    # a 1-element checkpoint entry loads into a 0-d parameter
    for lib in LIBS:
        mm = lib.nn.Module()
        mm.p = lib.nn.Parameter(lib.tensor(0.0))
        mm.load_state_dict({"p": lib.tensor([5.0])})
        assert mm.p.shape == () and float(mm.p.detach()) == 5.0


def test_state_dict_and_load_hooks():
    def run(lib):
        calls = []
        m = lib.nn.Linear(2, 2)
        m.register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre", prefix)))

        def post(mod, sd, prefix, meta):
            sd[prefix + "note"] = lib.ones(1)
        m.register_state_dict_post_hook(post)
        keys = list(m.state_dict(prefix="x."))
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: calls.append(("load_pre", sorted(sd))))

        def forgive(mod, incompatible):
            calls.append(("load_post", list(incompatible.unexpected_keys)))
            incompatible.unexpected_keys.clear()
        handle = m.register_load_state_dict_post_hook(forgive)
        m.load_state_dict({**m.state_dict(), "extra": lib.ones(1)})
        handle.remove()
        return calls, keys
    assert run(torchjax) == run(torch)
    same_error(lambda lib: lib.nn.Linear(1, 1).register_load_state_dict_post_hook(
        lambda m, k: 1).remove() or _load_with_bad_post_hook(lib))


def _load_with_bad_post_hook(lib):
    m = lib.nn.Linear(1, 1)
    m.register_load_state_dict_post_hook(lambda mod, keys: 1)
    m.load_state_dict(m.state_dict())


def test_extra_state_round_trip():
    def make(lib):
        class WithExtra(lib.nn.Linear):
            def get_extra_state(self):
                return {"n": 7}

            def set_extra_state(self, state):
                self.loaded = state
        return WithExtra(2, 2)
    tm, jm = make(torch), make(torchjax)
    assert list(jm.state_dict()) == list(tm.state_dict()) == ["weight", "bias", "_extra_state"]
    jm.load_state_dict(jm.state_dict())
    assert jm.loaded == {"n": 7}
    same_error(lambda lib: lib.nn.Linear(1, 1).load_state_dict(
        {"weight": lib.ones(1, 1), "bias": lib.ones(1), "_extra_state": 1}))


# -- modes, gradients, conversions ------------------------------------------------------------

def test_train_eval_requires_grad_and_zero_grad():
    m = make_net(torchjax)
    assert m.eval() is m and not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m(torchjax.ones(2, 3)).sum().backward()
    m.zero_grad(set_to_none=False)
    grads = [p.grad for p in m.parameters() if p.grad is not None]
    assert len(grads) == 5 and all(float(g.abs().sum()) == 0 for g in grads)
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_to_and_casts_keep_parameter_identity():
    m = torchjax.nn.Linear(2, 2)
    m.register_buffer("steps", torchjax.zeros((), dtype=torchjax.int64))
    w = m.weight
    m(torchjax.ones(1, 2)).sum().backward()
    assert m.to(torchjax.float64) is m
    assert m.weight is w and w.dtype == torchjax.float64 and w.grad.dtype == w.dtype
    assert m.steps.dtype == torchjax.int64  # integer buffers are not cast
    for cast, dtype in ((m.half, torchjax.float16), (m.bfloat16, torchjax.bfloat16),
                        (m.float, torchjax.float32)):
        assert cast() is m and w.dtype == dtype and m.steps.dtype == torchjax.int64
    m.to("cpu", torchjax.float64)
    m.to(torchjax.zeros(1), non_blocking=True)
    assert w.dtype == torchjax.float32
    m.to(device="cpu", dtype=torchjax.float64)
    assert m.cpu() is m and w.dtype == torchjax.float64 and w.device.type == "cpu"
    m.type(torchjax.float32)
    assert m.steps.dtype == torchjax.float32  # type() casts every tensor
    with pytest.warns(UserWarning, match="Complex modules are a new feature"):
        torchjax.nn.Linear(2, 2).to(torchjax.complex64)


# -- hooks ------------------------------------------------------------------------------------

def test_forward_hooks_order_and_results():
    def run(lib):
        calls = []
        m = lib.nn.Linear(2, 2)
        h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre1") or args[0] * 2)
        m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)

        def pre_kw(mod, args, kwargs):
            calls.append(("pre_kw", len(args), sorted(kwargs)))
            return args, kwargs
        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("post1") or out + 1)
        m.register_forward_hook(
            lambda mod, args, kwargs, out: calls.append(("post_kw", sorted(kwargs))) or out * 3,
            with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("post0"), prepend=True)
        x = lib.ones(1, 2)
        with torch.no_grad(), torchjax.no_grad():
            m.weight.fill_(0.5)
            m.bias.fill_(0.0)
        out1 = m(x).detach().numpy().tolist()
        h1.remove()
        out2 = m(x).detach().numpy().tolist()
        with m.register_forward_hook(lambda mod, args, out: out * 0):
            out3 = m(x).detach().numpy().tolist()
        out4 = m(x).detach().numpy().tolist()
        return calls, out1, out2, out3, out4
    assert run(torchjax) == run(torch)


def test_always_call_hooks_and_bad_pre_hook():
    def run(lib):
        calls = []

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        m = Boom()
        m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)),
                                always_call=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("never"))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        return calls
    assert run(torchjax) == run(torch) == [("always", None)]

    def bad_pre(lib):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        m(lib.ones(1))
    same_error(bad_pre)


def test_global_forward_hooks_fire_first():
    def run(lib):
        from importlib import import_module
        mm = import_module(lib.__name__ + ".nn.modules.module")
        calls = []
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args: calls.append("local_pre"))
        m.register_forward_hook(lambda mod, args, out: calls.append("local"))
        handles = [
            mm.register_module_forward_pre_hook(lambda mod, args: calls.append("global_pre")),
            mm.register_module_forward_hook(lambda mod, args, out: calls.append("global")),
        ]
        try:
            m(lib.ones(1))
        finally:
            for h in handles:
                h.remove()
        m(lib.ones(1))
        return calls
    assert run(torchjax) == run(torch)


# -- printing, introspection, pickling --------------------------------------------------------

def test_repr_nested_and_multiline_extra_repr():
    def make(lib):
        class Multi(lib.nn.Module):
            def extra_repr(self):
                return "first=1\n\nthird=3"

        class Outer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = lib.nn.Sequential(lib.nn.Linear(2, 3, bias=False), Multi())
                self.empty = None
                self.multi = Multi()

            def extra_repr(self):
                return "outer=True"
        return Outer()
    assert repr(make(torchjax)) == repr(make(torch))
    assert repr(make_net(torchjax)) == repr(make_net(torch))


def test_dir_lists_registered_names():
    m = make_net(torchjax)
    names = dir(m)
    assert {"block", "scale", "head", "forward", "training"} <= set(names)
    assert names == sorted(names)
    seq = torchjax.nn.Sequential(torchjax.nn.ReLU())
    assert not any(k.isdigit() for k in dir(seq))


class _PicklableNet(torchjax.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = torchjax.nn.Sequential(torchjax.nn.Linear(3, 4), torchjax.nn.ReLU())
        self.block.register_buffer("steps", torchjax.zeros((), dtype=torchjax.int64))
        self.scale = torchjax.nn.Parameter(torchjax.ones(4))
        self.head = torchjax.nn.Linear(4, 2)
        self.head2 = torchjax.nn.Linear(4, 2)
        self.head2.weight = self.head.weight


def test_pickle_and_deepcopy():
    m = _PicklableNet()
    m.eval()
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert type(clone) is _PicklableNet and not clone.training
        assert list(clone.state_dict()) == list(m.state_dict())
        for (k, a), b in zip(m.state_dict().items(), clone.state_dict().values()):
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
        assert clone.head.weight is not m.head.weight
        assert clone.head2.weight is clone.head.weight  # sharing survives
        assert isinstance(clone.scale, torchjax.nn.Parameter) and clone.scale.requires_grad
    h = m.register_forward_hook(_pickle_hook)
    clone = pickle.loads(pickle.dumps(m))
    assert list(clone._forward_hooks.values()) == [_pickle_hook]
    h.remove()


def _pickle_hook(module, args, out):
    return out


# -- layers -----------------------------------------------------------------------------------

def _forward_backward(tm, jm, *shapes, seed=1, same_node=True):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=s).astype(np.float32) for s in shapes]
    outs = []
    for lib, m in ((torch, tm), (torchjax, jm)):
        ins = [lib.tensor(x, requires_grad=True) for x in xs]
        y = m(*ins)
        (y * lib.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(
            tuple(y.shape)))).sum().backward()
        outs.append((y.detach().numpy(), [i.grad.numpy() for i in ins],
                     [p.grad.numpy() for p in m.parameters()], y.grad_fn.name()))
    (yt, gt, pt, nt), (yj, gj, pj, nj) = outs
    np.testing.assert_allclose(yj, yt, rtol=1e-5, atol=1e-5)
    for a, b in zip(gj + pj, gt + pt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert nj == nt or not same_node


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches(bias):
    tm, jm = (lib.nn.Bilinear(3, 4, 2, bias=bias) for lib in LIBS)
    copy_weights(tm, jm)
    assert repr(jm) == repr(tm) and list(jm.state_dict()) == list(tm.state_dict())
    _forward_backward(tm, jm, *(((5, 3), (5, 4)) if bias else ((2, 3, 3), (2, 3, 4))))


@pytest.mark.parametrize("shapes", [((5, 3), (3,)), ((5, 3), (4, 4)), ((5, 2), (5, 4)),
                                    ((5, 3), (5, 3))])
def test_bilinear_errors(shapes):
    def fn(lib):
        m = lib.nn.Bilinear(3, 4, 2)
        m(lib.zeros(*shapes[0]), lib.zeros(*shapes[1]))
    same_error(fn)
    same_error(lambda lib: lib.nn.functional.bilinear(
        lib.zeros(5, 3), lib.zeros(5, 4), lib.zeros(2, 3, 4), lib.zeros(3)))
    same_error(lambda lib: lib.nn.functional.bilinear(
        lib.zeros(5, 3, dtype=lib.float64), lib.zeros(5, 4), lib.zeros(2, 3, 4), lib.zeros(2)))
    same_error(lambda lib: lib.nn.Bilinear(0, 4, 2))


def test_linear_and_identity():
    tm, jm = (lib.nn.Linear(3, 2, bias=False) for lib in LIBS)
    copy_weights(tm, jm)
    assert repr(jm) == repr(tm) == "Linear(in_features=3, out_features=2, bias=False)"
    _forward_backward(tm, jm, (4, 3))
    ident = torchjax.nn.Identity(54, unused="x")
    x = torchjax.ones(2)
    assert ident(x) is x and repr(ident) == "Identity()"
    w = torchjax.nn.Linear(3, 2, dtype=torchjax.float64).weight
    assert w.dtype == torchjax.float64 and float(w.abs().max()) <= 1 / np.sqrt(3)


def test_lazy_linear():
    tm, jm = (lib.nn.LazyLinear(2) for lib in LIBS)
    assert repr(jm) == repr(tm) and repr(jm.weight) == "<UninitializedParameter>"
    assert repr(jm.state_dict()) == repr(tm.state_dict())
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        jm.weight.shape
    x = np.ones((4, 3), np.float32)
    tm(torch.tensor(x))
    jm(torchjax.tensor(x))
    assert type(jm) is torchjax.nn.Linear and repr(jm) == repr(tm)
    assert type(jm.weight) is torchjax.nn.Parameter and jm.weight.shape == (2, 3)
    assert not jm._forward_pre_hooks and not hasattr(jm, "_initialize_hook")
    copy_weights(tm, jm)
    _forward_backward(tm, jm, (4, 3))
    # loading a checkpoint materializes the parameters; in_features follows the first input
    lazy = torchjax.nn.LazyLinear(2)
    lazy.load_state_dict(to_jax_state(tm.state_dict()))
    assert lazy.weight.shape == (2, 3) and lazy.in_features == 0
    out = lazy(torchjax.tensor(x))
    assert lazy.in_features == 3 and type(lazy) is torchjax.nn.Linear
    np.testing.assert_allclose(out.detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)


def test_buffer_and_parameter_constructors():
    same_error(lambda lib: lib.nn.Parameter(lib.tensor([1, 2])))
    p = torchjax.nn.Parameter()
    assert p.shape == (0,) and p.dtype == torchjax.float32 and p.requires_grad
    q = torchjax.nn.Parameter(torchjax.tensor([1, 2]), requires_grad=False)
    assert not q.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = torchjax.nn.Buffer(torchjax.ones(2), persistent=False)
    assert isinstance(b, torchjax.nn.Buffer) and b.persistent is False
    assert not isinstance(torchjax.ones(2), torchjax.nn.Buffer)


def test_global_registration_hooks():
    def run(lib):
        from importlib import import_module
        mm = import_module(lib.__name__ + ".nn.modules.module")
        seen = []
        handles = [
            mm.register_module_parameter_registration_hook(
                lambda mod, name, p: seen.append(("param", name))),
            mm.register_module_buffer_registration_hook(
                lambda mod, name, b: seen.append(("buffer", name)) or lib.zeros(1)),
            mm.register_module_module_registration_hook(
                lambda mod, name, sub: seen.append(("module", name))),
        ]
        try:
            m = lib.nn.Linear(1, 1)
            m.register_buffer("b", lib.ones(3))
            m.sub = lib.nn.ReLU()
        finally:
            for h in handles:
                h.remove()
        lib.nn.Linear(1, 1)
        return seen, tuple(m.b.shape)
    assert run(torchjax) == run(torch)
