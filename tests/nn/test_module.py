"""nn.Module's behaviour against PyTorch: registration and its errors, traversal, modes,
conversions, hooks, repr, pickling and the global registration hooks (state dicts:
test_module_state.py)."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import torchjax

from ._module_common import LIBS, make_net, same_error

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
