"""Full backward (pre-)hooks against PyTorch: order, the gradients they see and replace, their
warnings, and calls with and without gradients (see test_hooks.py)."""

from __future__ import annotations

import warnings

import pytest
import torch

import torchjax

from ._hooks_common import (
    LIBS,
    _Globals,
    _reset_global_full_flag,  # noqa: F401 - an autouse fixture: keeps each test's globals apart
    assert_same,
    modmod,
    rec,
    same,
    same_error,
    scale_module,
    warnings_of,
)

# -- full backward hooks ---------------------------------------------------------------------

def test_backward_hook_order_nested_globals_prepend_and_tensor_hooks():
    def run(lib):
        log = []
        a, b = scale_module(lib, "a", log), scale_module(lib, "b", log, 3.0)
        seq = lib.nn.Sequential(a, b)
        for name, m in (("a", a), ("b", b), ("seq", seq)):
            m.register_forward_hook(lambda mod, args, out, n=name: log.append(("fwd", n)))
            m.register_full_backward_pre_hook(
                lambda mod, go, n=name: log.append(("bpre", n, rec(go))))
            m.register_full_backward_hook(
                lambda mod, gi, go, n=name: log.append(("bhook", n, rec(gi), rec(go))))
            m.register_full_backward_pre_hook(
                lambda mod, go, n=name: log.append(("bpre0", n)), prepend=True)
            m.register_full_backward_hook(
                lambda mod, gi, go, n=name: log.append(("bhook0", n)), prepend=True)
        with _Globals(lib) as g:
            g.add("register_module_full_backward_pre_hook",
                  lambda mod, go: log.append(("gbpre", type(mod).__name__)))
            g.add("register_module_full_backward_hook",
                  lambda mod, gi, go: log.append(("gbhook", type(mod).__name__)))
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            x.register_hook(lambda gr: log.append(("x-hook", rec(gr))))
            y = seq(x)
            y.register_hook(lambda gr: log.append(("y-hook", rec(gr))))
            a.w.register_hook(lambda gr: log.append("wa-hook"))
            b.w.register_hook(lambda gr: log.append("wb-hook"))
            log.append("backward")
            (y * y).sum().backward()
        return log, rec(x.grad), rec(a.w.grad)
    same(run)


def test_grad_tuples_with_non_tensor_int_and_unused_arguments():
    def run(lib):
        log = []

        class Multi(lib.nn.Module):
            def forward(self, a, b, scale, idx, d):
                return a * 2 + b, "tag", a.sum() * scale, idx + 1, d

        m = Multi()
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", rec(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", rec(gi),
                                                                      rec(go))))
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3)  # needs no gradient: its grad_input entry is zeros
        idx = lib.arange(3)  # an integer tensor: zeros of its dtype
        d = lib.ones(2, requires_grad=True)  # unused by the loss: zeros in grad_input
        out = m(a, b, 5.0, idx, d)
        log.append(("out", [type(o).__name__ for o in out], out[0].grad_fn.name(),
                    out[3].requires_grad, out[4].requires_grad))
        out[0].sum().backward()
        out = m(a, b, 5.0, idx, d)
        (out[0].sum() + (out[4] * 3).sum()).backward()
        return log, rec((a.grad, d.grad))
    same(run)


def test_full_hook_replaces_grad_input_only_for_the_input():
    def run(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (m(x) * lib.tensor([1.0, -1.0, 2.0])).sum().backward()
        return rec((x.grad, m.w.grad))
    same(run)


def test_pre_hook_replaces_grad_output_for_everything_upstream():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(rec(go)))  # sees it
        m.register_full_backward_hook(lambda mod, gi, go: log.append(rec((gi, go))))
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        m(x).sum().backward()
        return log, rec((x.grad, m.w.grad))
    same(run)


def test_chained_replacements_and_none():
    def run(lib):
        log = []

        class Two(lib.nn.Module):
            def forward(self, p, q):
                return p * q, p + q
        m = Two()
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1, None))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(rec(gi)))
        m.register_full_backward_hook(lambda mod, gi, go: [g * 2 if g is not None else None
                                                           for g in gi])
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        q = lib.tensor([3.0, 4.0], requires_grad=True)
        u, v = m(p, q)
        (u + 2 * v).sum().backward()
        return log, rec(p.grad), q.grad is None
    same(run)


def test_hook_returning_wrong_number_of_grads():
    def full(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        m(lib.ones(3, requires_grad=True)).sum().backward()

    def pre_tuple(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        m(lib.ones(3, requires_grad=True)).sum().backward()

    def pre_bare_tensor(lib):
        # a bare tensor is measured with len(): its first dimension
        m = scale_module(lib, "m", [])
        m.register_full_backward_pre_hook(lambda mod, go: go[0])
        m(lib.ones(3, requires_grad=True)).sum().backward()

    assert same_error(full)[1].startswith("Backward hook returned an invalid number")
    assert same_error(pre_tuple)[1].endswith("got 2, but expected 1")
    assert same_error(pre_bare_tensor)[1].endswith("got 3, but expected 1")


def test_no_input_requires_grad_fires_on_outputs_with_warning():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", rec(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", gi, rec(go))))
        m.register_full_backward_hook(lambda mod, gi, go: (None,))  # all None is allowed
        m(lib.ones(3)).sum().backward()
        return log, rec(m.w.grad)

    expected = warnings_of(run, torch)
    got = warnings_of(run, torchjax)
    assert_same(got, expected)
    assert expected[1] == [("UserWarning", "Full backward hook is firing when gradients are "
                            "computed with respect to module outputs since no inputs require "
                            "gradients. See https://docs.pytorch.org/docs/main/generated/"
                            "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                            "for more details.")]


def test_no_input_requires_grad_warning_points_at_the_backward_call():
    for lib in LIBS:
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda mod, gi, go: None)
        loss = m(lib.ones(3)).sum()
        with pytest.warns(UserWarning, match="Full backward hook is firing") as w:
            loss.backward()
        assert w[0].filename == __file__


def test_no_input_requires_grad_hook_may_not_return_grads():
    def bad(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(3),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(lib.ones(3)).sum().backward()
    assert "should always return None" in same_error(bad)[1]


def test_non_tensor_outputs_warn_and_hooks_never_fire():
    def run(lib):
        log = []

        class AsDict(lib.nn.Module):
            def forward(self, x):
                return {"y": x * 2}

        class AsList(lib.nn.Module):
            def forward(self, x):
                return [x * 2, x * 3]
        x = lib.ones(3, requires_grad=True)
        for cls in (AsDict, AsList):
            m = cls()
            m.register_full_backward_hook(lambda mod, gi, go: log.append("hook"))
            m.register_full_backward_pre_hook(lambda mod, go: log.append("pre"))
            out = m(x)
            first = out["y"] if isinstance(out, dict) else out[0]
            log.append((type(out).__name__, first.grad_fn.name()))
            first.sum().backward()
        return log, rec(x.grad)
    expected = warnings_of(run, torch)
    assert_same(warnings_of(run, torchjax), expected)
    assert [w[1].rsplit(" ", 2)[1:] for w in expected[1]] == [["<class", "'dict'>"],
                                                               ["<class", "'list'>"]]


def test_keyword_inputs_are_not_in_grad_input():
    def run(lib):
        log = []

        class Kw(lib.nn.Module):
            def forward(self, x, *, y):
                return x * y
        m = Kw()
        m.register_full_backward_hook(lambda mod, gi, go: log.append(rec((gi, go))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 5.0], requires_grad=True)
        m(x, y=y).sum().backward()
        return log, rec((x.grad, y.grad))
    same(run)


def test_forward_pre_hook_output_feeds_backward_hooks():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        z = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
        m.register_forward_pre_hook(lambda mod, args: (args[0] * z,))
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd-args", rec(args))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("bwd", rec(gi))))
        m(x).sum().backward()
        return log, rec((x.grad, z.grad))
    same(run)


def test_linear_layer_hooks_see_its_gradients():
    def run(lib):
        log = []
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]))
            m.bias.copy_(lib.tensor([0.1, -0.2]))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", rec(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", rec(gi))))
        x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], requires_grad=True)
        out = m(x)
        (out * out).sum().backward()
        return log, rec((x.grad, m.weight.grad, m.bias.grad))
    same(run)


def test_module_called_twice_and_retain_graph():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda mod, gi, go: log.append(rec((gi, go))))
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = m(m(x))
        loss = (y * y).sum()
        loss.backward(retain_graph=True)
        log.append("again")
        loss.backward()
        return log, rec(x.grad)
    same(run)


def test_hooks_removed_and_no_grad_calls():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        h_pre = m.register_full_backward_pre_hook(lambda mod, go: log.append("pre"))
        h = m.register_full_backward_hook(lambda mod, gi, go: log.append("hook"))
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            out = m(x)
        log.append(("no_grad", out.grad_fn, out.requires_grad))
        m(x).sum().backward()
        h_pre.remove()
        m(x).sum().backward()
        h.remove()
        out = m(x)
        log.append(out.grad_fn.name())
        out.sum().backward()
        with modmod(lib).register_module_full_backward_hook(lambda mod, gi, go: log.append("g")):
            m(x).sum().backward()
        m(x).sum().backward()
        return log
    assert same(run) == [("no_grad", None, False), "pre", "hook", "hook", "MulBackward0", "g"]
