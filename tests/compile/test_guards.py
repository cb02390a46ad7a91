"""Recompiles: whatever a trace assumed that a later call changes gives a new program (never
a stale one), each with its logged reason; past recompile_limit the function runs eagerly."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import torchjax as torch
from torchjax import nn


def _pair():
    """The same model and function twice: one to run eagerly, one compiled."""
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))

    def fn(x, scale=1.0, flag=False):
        y = m(x) * scale
        return y.relu() if flag else y

    return m, fn


def _check(fn, cfn, *args, **kwargs):
    torch.manual_seed(7)
    want = fn(*args, **kwargs)
    torch.manual_seed(7)
    got = cfn(*args, **kwargs)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6,
                               atol=1e-7)
    assert got.requires_grad == want.requires_grad
    return got


def test_every_guard_recompiles_and_matches_eager(caplog):
    m, fn = _pair()
    cfn = torch.compile(fn)
    x = torch.randn(2, 3)
    with caplog.at_level(logging.INFO, logger="torchjax.recompiles"):
        _check(fn, cfn, x)
        _check(fn, cfn, x)                         # same signature: no new program
        assert cfn.compiles == 1
        _check(fn, cfn, torch.randn(5, 3))          # shape
        _check(fn, cfn, x.double().float())         # same again: cached
        assert cfn.compiles == 2
        m.double()
        _check(fn, cfn, x.double())                 # dtypes of input and parameters
        m.float()
        _check(fn, cfn, x, 2.0)                     # a Python scalar
        _check(fn, cfn, x, 2.0, True)               # a flag
        m.eval()
        _check(fn, cfn, x)                          # module.training
        m.train()
        with torch.no_grad():
            _check(fn, cfn, x)                      # grad mode
        m[0].weight.requires_grad_(False)           # a frozen parameter
        _check(fn, cfn, x)
        m[0].weight.requires_grad_(True)
    reasons = [r.getMessage() for r in caplog.records]
    text = "\n".join(reasons)
    for phrase in ("argument 0 changed", "2.0", "Sequential.training is now False",
                   "grad mode changed", "requires_grad is now False"):
        assert phrase in text, (phrase, text)
    assert all(r.startswith("Recompiling function _pair.<locals>.fn: ") for r in reasons)


def test_scheduler_changes_lr_without_recompiling():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1 + e))

    @torch.compile
    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
        sched.step()

    x = torch.ones(1, 3)
    for _ in range(6):
        w0 = model.weight.detach().clone()
        lr = opt.param_groups[0]["lr"]
        step(x)
        np.testing.assert_allclose((w0 - model.weight.detach()).numpy(), lr * np.ones((1, 3)),
                                   rtol=1e-5)
    assert sched.last_epoch == 6 and step.compiles == 1


def test_new_param_group_and_replaced_parameter_rediscovered():
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    extra = nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)

    def step(x):
        opt.zero_grad()
        (model(x) * extra).sum().backward()
        opt.step()

    cstep = torch.compile(step)
    x = torch.ones(1, 2)
    cstep(x)
    opt.add_param_group({"params": [extra], "lr": 0.1})
    cstep(x)
    # the new group's parameter moved as eager moves it
    torch.manual_seed(0)
    m2 = nn.Linear(2, 1)
    e2 = nn.Parameter(torch.ones(1))
    o2 = torch.optim.SGD(m2.parameters(), lr=0.5)
    o2.zero_grad()
    (m2(x) * e2).sum().backward()
    o2.step()
    o2.add_param_group({"params": [e2], "lr": 0.1})
    o2.zero_grad()
    (m2(x) * e2).sum().backward()
    o2.step()
    np.testing.assert_allclose(extra.detach().numpy(), e2.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(model.weight.detach().numpy(), m2.weight.detach().numpy(),
                               rtol=1e-6)
    # replacing the parameter object: the compiled step reads the new one
    model.weight = nn.Parameter(torch.full((1, 2), 3.0))
    opt.param_groups[0]["params"][0] = model.weight
    cstep(x)
    assert model.weight.grad is not None
    assert not np.allclose(model.weight.detach().numpy(), 3.0)


def test_recompile_limit_falls_back_to_eager(monkeypatch):
    from torchjax.compiler import config
    monkeypatch.setattr(config, "recompile_limit", 3)

    @torch.compile
    def f(x):
        return x * 2

    for n in range(1, 4):
        f(torch.ones(n))
    with pytest.warns(UserWarning, match="recompile_limit"):
        out = f(torch.ones(7))
    assert f.compiles == 3
    np.testing.assert_allclose(out.numpy(), 2 * np.ones(7))
    f(torch.ones(8))  # later new signatures: eager, no second warning
    assert f.compiles == 3


def test_inputs_modified_in_place_and_buffers():
    """An argument changed in place and BatchNorm's running statistics are written back."""
    bn = nn.BatchNorm1d(3)

    @torch.compile
    def fn(x, acc):
        acc.add_(x.sum(0))
        return bn(x)

    ref = nn.BatchNorm1d(3)
    acc, ref_acc = torch.zeros(3), torch.zeros(3)
    torch.manual_seed(0)
    for _ in range(3):
        x = torch.randn(4, 3)
        yc = fn(x, acc)
        ye = ref(x)
        ref_acc.add_(x.sum(0))
        np.testing.assert_allclose(yc.detach().numpy(), ye.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_allclose(acc.numpy(), ref_acc.numpy(), rtol=1e-6)
    np.testing.assert_allclose(bn.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), ref.running_var.numpy(), rtol=1e-6)
    assert bn.num_batches_tracked.item() == 3
    assert acc._version > 0


def test_state_of_another_shape_is_traced_again():
    """A parameter replaced by one of another shape (the cache key holds no state shapes: the
    program's own argument check catches it)."""
    model = nn.Linear(3, 2)

    @torch.compile
    def f(x):
        return model(x).sum(1)

    x = torch.ones(1, 3)
    f(x)
    model.weight = nn.Parameter(torch.ones(2, 3, dtype=torch.float64))
    model.bias = nn.Parameter(torch.zeros(2, dtype=torch.float64))
    out = f(x.double())
    assert out.dtype == torch.float64 and out.item() == 6.0
    model.weight = nn.Parameter(torch.ones(2, 3))
    model.bias = nn.Parameter(torch.zeros(2))
    assert f(x).item() == 6.0 and f.compiles == 2
    model.weight = nn.Parameter(torch.ones(4, 3))
    model.bias = nn.Parameter(torch.zeros(4))
    assert f(x).item() == 12.0  # the same key as before, state shapes changed
    assert f.compiles == 3


def test_gradients_of_leaf_arguments():
    """backward() inside the step reaching leaf arguments: fresh arguments get their .grad
    every call, and one argument passed again accumulates, as eagerly (a tracer used to stay
    in the argument's .grad, and later calls left it None)."""
    import warnings

    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        w = torch.ones(3, requires_grad=True)

        def step(x):
            (x * w * x).sum().backward()
            return x

        f = torch.compile(step) if compiled else step
        xs = [torch.randn(3, requires_grad=True) for _ in range(3)]
        for x in xs:
            f(x)
        same = torch.randn(3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the accumulating signature breaks the graph
            for _ in range(3):
                f(same)
        assert all(type(x.grad._data).__name__ == "ArrayImpl" for x in xs + [same])
        results.append([x.grad.numpy() for x in xs] + [same.grad.numpy(), w.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_the_express_path_notices_every_change(monkeypatch):
    """After a steady call the next tensors-only call skips the key (_guard.express): each
    thing the key holds, changed right after the express path is in use, still gets its own
    program and eager's result (values, requires_grad and the gradients of the inputs)."""
    from torchjax.compiler import config
    monkeypatch.setattr(config, "recompile_limit", 64)
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    scale = [1.0]

    def fn(x, y):
        return m(x) * y.sum() * scale[0]

    cfn = torch.compile(fn)
    x, y = torch.randn(2, 3), torch.randn(3)

    def changed(*args):
        for _ in range(3):
            _check(fn, cfn, x, y)
        assert cfn._express is not None and cfn._express[2].executions >= 2
        got = _check(fn, cfn, *args)
        leaves = [a for a in args if a.requires_grad]
        if got.requires_grad and leaves:
            want = torch.autograd.grad(fn(*args).sum(), leaves)
            for g, w in zip(torch.autograd.grad(got.sum(), leaves), want):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)

    n = cfn.compiles
    changed(torch.randn(5, 3), y)                               # shape
    changed(x, y.double())                                      # dtype
    changed(x.clone().requires_grad_(), y)                      # requires_grad
    xg = x.clone().requires_grad_()
    xg.grad = torch.ones(2, 3)
    changed(xg, y)                                              # an argument with a .grad
    changed(x, x[0])                                            # another tensor, same key
    z = torch.randn(3)
    changed(z.reshape(1, 3), z)                                 # a view of the other
    changed(y, y)                                               # one tensor twice
    with torch.no_grad():
        changed(x, y)                                           # grad mode
    m.eval()
    changed(x, y)                                               # the training flag
    m.train()
    scale[0] = 3.0
    changed(x, y)                                               # a value read inside
    m[0].weight.requires_grad_(False)
    changed(x, y)                                               # a frozen parameter
    m[0].weight.requires_grad_(True)
    for _ in range(3):
        cfn(x, y)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, want = cfn(x, y), fn(x, y)
    assert got.dtype == want.dtype == torch.bfloat16
    np.testing.assert_allclose(got.float().detach().numpy(), want.float().detach().numpy(),
                               rtol=1e-2, atol=1e-2)
    assert cfn.compiles > n


def test_hooks_added_replaced_or_global_give_a_new_program():
    """A module hook swapped for another (the same count of hooks) and a hook registered on
    every module (register_module_forward_hook) after the function was compiled change the
    result as they do eagerly: the program built without them is not reused."""
    from torchjax.nn.modules import module as module_mod
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))

    def fn(x):
        return m(x)

    cfn = torch.compile(fn)
    x = torch.randn(2, 3)

    def steady_then_check():
        for _ in range(3):
            _check(fn, cfn, x)
        assert cfn._express is not None

    h = m[1].register_forward_hook(lambda mod, inp, out: out * 2)
    steady_then_check()
    h.remove()
    h = m[1].register_forward_hook(lambda mod, inp, out: out - 1)  # same count, another hook
    _check(fn, cfn, x)
    steady_then_check()
    h.remove()
    g = module_mod.register_module_forward_hook(lambda mod, inp, out: out * 0.5)
    try:
        got = _check(fn, cfn, x)
        assert got.abs().sum().item() > 0
        steady_then_check()
    finally:
        g.remove()
    _check(fn, cfn, x)


def test_module_changes_made_behind_its_methods_give_a_new_program(monkeypatch):
    """The guard reads a module's structure again only when something changed one (the
    watched dicts of nn.modules._watched): changes made straight on a module's dicts, its
    class or its attributes, right after the express path is in use, reach the result."""
    from torchjax.compiler import config
    monkeypatch.setattr(config, "recompile_limit", 64)
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Dropout(0.5), nn.Linear(4, 2))

    def fn(x):
        return m(x)

    cfn = torch.compile(fn)
    x = torch.randn(2, 3)

    def swap_weight():                          # straight into _parameters, same shape
        m[0]._parameters["weight"] = nn.Parameter(torch.ones(4, 3))

    def swap_child():                           # straight into _modules
        m._modules["1"] = nn.ReLU()

    def dropout_off():                          # the attribute, not train()/eval()
        m[2].training = False

    def klass():                                # another class, same object
        m[1].__class__ = nn.Sigmoid

    def new_hooks_dict():                       # a dict assigned to the internals
        m[3]._forward_hooks = {7: lambda mod, inp, out: out + 1}

    def pop_hook():
        m[3]._forward_hooks.pop(7)

    for change in (swap_weight, swap_child, dropout_off, klass, new_hooks_dict, pop_hook):
        for _ in range(3):
            _check(fn, cfn, x)
        assert cfn._express is not None
        change()
        _check(fn, cfn, x)


def test_optimizer_step_hooks_added_after_compiling_run():
    """An optimizer step hook (the optimizer's own or every optimizer's) registered, or
    swapped for another, once the step is compiled runs in the next step as it does
    eagerly."""
    from torchjax.optim import optimizer as optimizer_mod

    def make():
        torch.manual_seed(0)
        m = nn.Linear(3, 2)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = m(x).pow(2).sum()
            loss.backward()
            opt.step()
            return loss
        return m, opt, step

    def halve(o, args, kwargs):
        with torch.no_grad():
            for g in o.param_groups:
                for p in g["params"]:
                    p.mul_(0.5)

    def negate(o, args, kwargs):
        with torch.no_grad():
            for g in o.param_groups:
                for p in g["params"]:
                    p.neg_()

    x = torch.randn(4, 3)
    runs = []
    for compiled in (False, True):
        m, opt, step = make()
        if compiled:
            step = torch.compile(step)
        for _ in range(3):
            step(x)
        h = opt.register_step_post_hook(halve)
        for _ in range(2):
            step(x)
        h.remove()
        h = opt.register_step_post_hook(negate)      # same count of hooks, another hook
        step(x)
        h.remove()
        g = optimizer_mod.register_optimizer_step_post_hook(halve)
        try:
            step(x)
        finally:
            g.remove()
        step(x)
        runs.append([p.detach().numpy().copy() for p in m.parameters()])
    for got, want in zip(runs[1], runs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_module_attributes_a_forward_reads_are_guarded(monkeypatch, caplog):
    """Numbers and flags a module keeps as attributes (Dropout's p, a scale of its own, a
    kernel size), a plain tensor attribute and a forward replaced on the instance are baked
    into the trace: changing
    one, right after the express path is in use, gives a new program with eager's result
    and a logged reason."""
    from torchjax.compiler import config
    monkeypatch.setattr(config, "recompile_limit", 64)

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.scale = 2.0
            self.drop = nn.Dropout(0.5)
            self.mask = torch.ones(4)               # a plain tensor attribute

        def forward(self, x):
            return self.drop(self.lin(x)) * self.scale * self.mask

    torch.manual_seed(0)
    m = Scaled()
    cfn = torch.compile(lambda x: m(x))
    x = torch.randn(2, 3)

    def steady():
        for _ in range(3):
            _check(m, cfn, x)
        assert cfn._express is not None

    steady()
    with caplog.at_level(logging.DEBUG, logger="torchjax"):
        m.scale = 3.0
        _check(m, cfn, x)
    assert any("scale" in r.getMessage() for r in caplog.records)
    steady()
    m.drop.p = 0.0
    _check(m, cfn, x)
    steady()
    m.scale = 3                                    # an int now: another trace (1 vs 1.0)
    _check(m, cfn, x)
    steady()
    m.mask = torch.tensor([1.0, 0.0, 2.0, 0.0])    # another tensor object there
    _check(m, cfn, x)
    steady()
    m.forward = lambda x: m.lin(x).relu()          # a forward set on the instance
    _check(m, cfn, x)
    steady()
    del m.forward
    _check(m, cfn, x)


TEMPERATURE = 1.0


def _activation(x):
    return x.relu()


class _UsesGlobals(nn.Module):
    """A forward reading a number and a function from its file's globals."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self._scaled(_activation(self.lin(x)))

    def _scaled(self, y):  # a helper method reading a global
        return y / TEMPERATURE


def test_globals_a_module_forward_reads_are_guarded(caplog):
    """A constant and a function a model's methods read from its own file's globals are
    baked into the trace: rebinding either, right after the express path is in use, gives
    a new program with eager's result and a logged reason."""
    global TEMPERATURE, _activation
    torch.manual_seed(0)
    m = _UsesGlobals()
    cfn = torch.compile(lambda x: m(x))
    x = torch.randn(4, 3)
    saved = TEMPERATURE, _activation

    def steady():
        for _ in range(3):
            _check(m, cfn, x)
        assert cfn._express is not None

    try:
        steady()
        TEMPERATURE = 2.0
        _check(m, cfn, x)
        steady()
        with caplog.at_level(logging.DEBUG, logger="torchjax"):
            _activation = torch.tanh
            _check(m, cfn, x)
        assert any("changed" in r.getMessage() for r in caplog.records)
        steady()
    finally:
        TEMPERATURE, _activation = saved
    _check(m, cfn, x)


STEPS_LOGGED = 0


class _LogsSteps(nn.Module):
    """A method the forward never calls reads a global the training loop changes."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x)

    def describe(self):
        return f"step {STEPS_LOGGED}"


def test_a_global_only_other_methods_read_does_not_recompile():
    """Only forward and the methods it names key the program: a step counter a logging
    method reads changes every call and never recompiles."""
    global STEPS_LOGGED
    torch.manual_seed(0)
    m = _LogsSteps()
    cfn = torch.compile(lambda x: m(x))
    x = torch.randn(2, 3)
    saved = STEPS_LOGGED
    try:
        for i in range(6):
            STEPS_LOGGED = i
            _check(m, cfn, x)
        assert m.describe() == "step 5"
    finally:
        STEPS_LOGGED = saved
    assert cfn.compiles == 1
