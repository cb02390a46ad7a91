"""Module hooks against PyTorch: forward (pre-)hooks, full backward (pre-)hooks, legacy backward
hooks and their global forms. Each scenario runs the same code with both libraries, records
what the hooks saw and in which order, and compares the records."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)


def modmod(lib):
    """lib.nn.modules.module, where the global hook registrations live."""
    return importlib.import_module(lib.__name__ + ".nn.modules.module")


def rec(x):
    """A comparable record of hook arguments: tensors become (shape, dtype, values)."""
    if isinstance(x, (torch.Tensor, torchjax.Tensor)):
        return ("T", tuple(x.shape), str(x.dtype), np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, (tuple, list)):
        return type(x)(rec(v) for v in x)
    return x


def assert_same(got, expected):
    """Equal records, tensors' values to float tolerance."""
    if isinstance(expected, tuple) and expected[:1] == ("T",):
        assert isinstance(got, tuple) and got[:3] == expected[:3], (got, expected)
        np.testing.assert_allclose(np.asarray(got[3], dtype=np.float64),
                                   np.asarray(expected[3], dtype=np.float64), rtol=1e-5,
                                   atol=1e-6)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    assert got == expected


def same(fn):
    """fn(lib) returns the same record in both libraries."""
    expected = fn(torch)
    assert_same(fn(torchjax), expected)
    return expected


def error_of(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


def same_error(fn):
    expected = error_of(fn, torch)
    assert error_of(fn, torchjax) == expected
    return expected


def warnings_of(fn, lib):
    """(result, [(category, message)]) of fn(lib), every warning recorded."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = fn(lib)
    return res, [(x.category.__name__, str(x.message)) for x in w]


class _Globals:
    """Global hooks registered for one test and removed after it."""

    def __init__(self, lib):
        self.mm = modmod(lib)
        self.handles = []

    def add(self, name, *args, **kwargs):
        self.handles.append(getattr(self.mm, name)(*args, **kwargs))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


@pytest.fixture(autouse=True)
def _reset_global_full_flag():
    """register_module_(full_)backward_hook sets a sticky module flag: keep tests apart."""
    yield
    for lib in LIBS:
        modmod(lib)._global_is_full_backward_hook = None


def scale_module(lib, name, log, factor=2.0):
    """y = x * w with w = factor (a parameter), logging its forward."""
    class Scale(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.full((3,), factor))

        def forward(self, x):
            log.append(("forward", name))
            return x * self.w
    return Scale()


# -- forward hooks ---------------------------------------------------------------------------

def test_forward_hook_order_nested_globals_prepend():
    def run(lib):
        log = []
        a, b = scale_module(lib, "a", log), scale_module(lib, "b", log)
        seq = lib.nn.Sequential(a, b)
        for name, m in (("a", a), ("b", b), ("seq", seq)):
            m.register_forward_pre_hook(lambda mod, args, n=name: log.append(("pre", n)))
            m.register_forward_pre_hook(lambda mod, args, n=name: log.append(("pre0", n)),
                                        prepend=True)
            m.register_forward_pre_hook(
                lambda mod, args, kwargs, n=name: log.append(("pre_kw", n, len(args))),
                with_kwargs=True)
            m.register_forward_hook(lambda mod, args, out, n=name: log.append(("post", n)))
            m.register_forward_hook(lambda mod, args, out, n=name: log.append(("post0", n)),
                                    prepend=True)
            m.register_forward_hook(
                lambda mod, args, kwargs, out, n=name: log.append(("post_kw", n, kwargs)),
                with_kwargs=True, always_call=True)
        with _Globals(lib) as g:
            g.add("register_module_forward_pre_hook",
                  lambda mod, args: log.append(("gpre", type(mod).__name__)))
            g.add("register_module_forward_hook",
                  lambda mod, args, out: log.append(("gpost", type(mod).__name__)))
            g.add("register_module_forward_hook",
                  lambda mod, args, kwargs, out: log.append(("gpost_kw", kwargs)),
                  with_kwargs=True)
            out = seq(lib.ones(3))
        log.append(("out", rec(out)))
        return log
    same(run)


def test_forward_hooks_replace_args_kwargs_and_output():
    def run(lib):
        class Affine(lib.nn.Module):
            def forward(self, x, *, shift=0.0):
                return x * 3 + shift
        m = Affine()
        seen = []
        m.register_forward_pre_hook(lambda mod, args: args[0] + 1)  # a bare value is wrapped
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: (args, {**kwargs, "shift": kwargs["shift"] * 10}),
            with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: seen.append(rec((args, out))))
        m.register_forward_hook(lambda mod, args, kwargs, out: out - kwargs["shift"],
                                with_kwargs=True)
        out = m(lib.ones(2), shift=1.0)
        return seen, rec(out)
    same(run)


def test_forward_hook_handles_remove_and_context_manager():
    def run(lib):
        log = []
        m = lib.nn.Identity()
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre"))
        h2 = m.register_forward_hook(lambda mod, args, kwargs, out: log.append("kw"),
                                     with_kwargs=True, always_call=True)
        m(lib.ones(1))
        h1.remove()
        h2.remove()
        h2.remove()  # a second remove is a no-op
        m(lib.ones(1))
        with m.register_forward_hook(lambda mod, args, out: log.append("ctx")):
            m(lib.ones(1))
        m(lib.ones(1))
        return log, len(m._forward_hooks_with_kwargs), len(m._forward_hooks_always_called)
    same(run)


def test_always_call_hooks_when_a_hook_raises():
    def run(lib):
        log = []
        m = lib.nn.Identity()

        def bad(mod, args, out):
            log.append("bad")
            raise ValueError("bad hook")
        m.register_forward_hook(lambda mod, args, out: log.append("first-always"),
                                always_call=True)
        m.register_forward_hook(bad)
        m.register_forward_hook(lambda mod, args, out: log.append(("late-always", rec(out))),
                                always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append("never"))
        with pytest.raises(ValueError, match="bad hook"):
            m(lib.ones(1))
        return log
    # the always_call hook that already ran is not run again; the later one sees the output
    assert same(run) == ["first-always", "bad", ("late-always", rec(torch.ones(1)))]


def test_always_call_hook_errors_become_warnings_and_globals_run():
    def run(lib):
        log = []

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise KeyError("boom")
        m = Boom()

        def failing(mod, args, out):
            raise RuntimeError("hook failed too")
        m.register_forward_hook(failing, always_call=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("local", kwargs)),
                                with_kwargs=True, always_call=True)
        with _Globals(lib) as g:
            g.add("register_module_forward_hook",
                  lambda mod, args, out: log.append(("global", out)), always_call=True)
            g.add("register_module_forward_pre_hook", lambda mod, args: log.append("gpre"))
            with pytest.raises(KeyError):
                m(lib.ones(1), )
        return log

    for lib in LIBS:
        res, warns = warnings_of(run, lib)
        assert res == ["gpre", ("global", None), ("local", {})]
        assert warns == [("UserWarning", "module forward hook with ``always_call=True`` raised "
                          "an exception that was silenced as another error was raised in "
                          "forward: hook failed too")]


def test_forward_pre_hook_with_kwargs_bad_return():
    def bad(lib):
        m = lib.nn.Identity()
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args,), with_kwargs=True)
        m(lib.ones(1))
    same_error(bad)


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


def test_in_place_write_to_an_input_inside_forward_is_an_error():
    class AddOne:
        @staticmethod
        def make(lib, under_no_grad=False):
            class M(lib.nn.Module):
                def forward(self, x):
                    if under_no_grad:
                        with lib.no_grad():
                            x.add_(1)
                    else:
                        x.add_(1)
                    return x * 2
            m = M()
            m.register_full_backward_hook(lambda *a: None)
            return m

    def grad_mode(lib):
        AddOne.make(lib)(lib.ones(3, requires_grad=True).clone()).sum().backward()

    def no_grad_mode(lib):
        AddOne.make(lib, True)(lib.ones(3, requires_grad=True).clone()).sum().backward()

    def relu_inplace(lib):
        r = lib.nn.ReLU(inplace=True)
        r.register_full_backward_pre_hook(lambda *a: None)
        r(lib.ones(3, requires_grad=True) * 1)

    msg = same_error(grad_mode)[1]
    assert msg.startswith("Output 0 of BackwardHookFunction is a view and is being modified "
                          "inplace.")
    assert "its base or another view of its base" in same_error(no_grad_mode)[1]
    same_error(relu_inplace)


def test_in_place_write_to_inputs_that_need_no_grad_is_allowed():
    def run(lib):
        class M(lib.nn.Module):
            def forward(self, x, b):
                b.add_(1)  # not wrapped for gradients: the caller's tensor changes
                return x * b
        m = M()
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append(rec(gi)))
        x, b = lib.ones(3, requires_grad=True), lib.ones(3)
        m(x, b).sum().backward()
        m(lib.ones(3), b)  # no input needs a gradient: nothing is wrapped
        return log, rec((b, x.grad))
    same(run)


def test_in_place_write_to_an_output_is_an_error():
    """PyTorch raises at the write; torchjax notices it when backward reaches the module."""
    def run(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda *a: None)
        y = m(lib.ones(3, requires_grad=True))
        y.add_(1)
        y.sum().backward()
    assert same_error(run)[1].startswith("Output 0 of BackwardHookFunction is a view and is "
                                         "being modified inplace")


def test_output_written_under_no_grad_is_fine_when_unused():
    def run(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_hook(lambda *a: None)
        x = lib.ones(3, requires_grad=True)
        y = m(x)
        loss = y.sum()
        with lib.no_grad():
            y.add_(1)
        loss.backward()
        return rec((y, x.grad))
    same(run)


def test_saved_input_changed_after_forward_is_caught():
    """The inner input shares its version counter with the caller's tensor, as a view does, so
    the saved-tensor check fires (PyTorch words it as the view's error, torchjax as the saved
    tensor's)."""
    def run(lib):
        m = scale_module(lib, "m", [])
        m.register_full_backward_pre_hook(lambda *a: None)
        x = lib.ones(3, requires_grad=True)
        w = lib.full((3,), 2.0, requires_grad=True)
        xx = x * 1
        y = m(xx) * w  # (x * w): the module's mul saves its input
        xx.add_(1)
        y.sum().backward()
    for lib in LIBS:
        kind, msg = error_of(run, lib)
        assert kind == "RuntimeError" and "modified" in msg and "inplace" in msg


# -- mixing full and legacy hooks ----------------------------------------------------------------

def test_full_and_legacy_hooks_cannot_be_mixed():
    msg = ("Cannot use both regular backward hooks and full backward hooks on a single Module. "
           "Please use only one of them.")

    def full_then_legacy(lib):
        m = lib.nn.Identity()
        m.register_full_backward_hook(lambda *a: None)
        m.register_backward_hook(lambda *a: None)

    def legacy_then_full_after_remove(lib):
        m = lib.nn.Identity()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.register_backward_hook(lambda *a: None).remove()
        m.register_full_backward_hook(lambda *a: None)  # the kind stays fixed after removal

    def pre_hooks_mix_freely(lib):
        m = lib.nn.Identity()
        m.register_full_backward_pre_hook(lambda *a: None)
        m.register_backward_hook(lambda *a: None)
        return m._is_full_backward_hook

    assert same_error(full_then_legacy) == ("RuntimeError", msg)
    assert same_error(legacy_then_full_after_remove) == ("RuntimeError", msg)
    assert same(pre_hooks_mix_freely) is False


def test_global_full_and_legacy_hooks_cannot_be_mixed():
    def legacy_then_full(lib):
        mm = modmod(lib)
        mm.register_module_backward_hook(lambda *a: None).remove()
        mm.register_module_full_backward_hook(lambda *a: None)

    def full_then_legacy(lib):
        mm = modmod(lib)
        mm.register_module_full_backward_hook(lambda *a: None).remove()
        mm.register_module_backward_hook(lambda *a: None)

    for fn in (legacy_then_full, full_then_legacy):
        assert same_error(fn) == ("RuntimeError", "Cannot use both regular backward hooks and "
                                  "full backward hooks as a global Module hook. Please use "
                                  "only one of them.")
        for lib in LIBS:
            modmod(lib)._global_is_full_backward_hook = None


# -- legacy hooks --------------------------------------------------------------------------------

def test_legacy_hook_sees_its_grad_fn_gradients_and_warns():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        m.register_backward_hook(lambda mod, gi, go: log.append(
            (type(gi).__name__, rec(gi), rec(go))))
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = m(x)
        log.append("backward")
        (out * lib.tensor([1.0, -2.0, 0.5])).sum().backward()
        return log, rec((x.grad, m.w.grad))
    expected = warnings_of(run, torch)
    assert_same(warnings_of(run, torchjax), expected)
    assert expected[1] == [("FutureWarning", "Using a non-full backward hook when the forward "
                            "contains multiple autograd Nodes is deprecated and will be "
                            "removed in future versions. This hook will be missing some "
                            "grad_input. Please use register_full_backward_hook to get the "
                            "documented behavior.")]


def test_legacy_hook_warnings_for_nested_outputs_and_non_tensor_inputs():
    def run(lib):
        class Nested(lib.nn.Module):
            def forward(self, x):
                return {"a": x * 2}

        class TakesInt(lib.nn.Module):
            def forward(self, x, k):
                return x * k
        a, b = Nested(), TakesInt()
        for m in (a, b):
            m.register_backward_hook(lambda *args: None)
        x = lib.ones(2, requires_grad=True)
        a(x)
        b(x, 3)
    expected = warnings_of(run, torch)[1]
    assert warnings_of(run, torchjax)[1] == expected
    assert [w[0] for w in expected] == ["FutureWarning"] * 2


def test_legacy_and_full_pre_hooks_together():
    """With a pre-hook the output passes through the identity node, so the legacy hook sees
    that node's single gradient."""
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", rec(go))))
        m.register_backward_hook(lambda mod, gi, go: log.append(("legacy", rec((gi, go)))))
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = m(x)
        (out * 2).sum().backward()
        return log
    same(run)


def test_global_legacy_hook():
    def run(lib):
        log = []
        m = scale_module(lib, "m", [])
        with _Globals(lib) as g, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g.add("register_module_backward_hook",
                  lambda mod, gi, go: log.append((type(mod).__name__, rec(go))))
            m(lib.ones(3, requires_grad=True)).sum().backward()
        m(lib.ones(3, requires_grad=True)).sum().backward()
        return log
    same(run)


def test_legacy_hook_replaces_grad_input():
    def run(lib):
        m = scale_module(lib, "m", [])
        m.register_backward_hook(lambda mod, gi, go: (gi[0] * 10, gi[1]))
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(x).sum().backward()
        return rec((x.grad, m.w.grad))
    same(run)


# -- more shapes of modules ---------------------------------------------------------------------

def test_identity_unused_input_and_duplicate_outputs():
    def run(lib):
        log = []

        class ParamOnly(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2))

            def forward(self, x):
                return self.w * 2  # the input's identity node is never reached

        class Twice(lib.nn.Module):
            def forward(self, x):
                return x * 2, x * 2
        p, i, t = ParamOnly(), lib.nn.Identity(), Twice()
        for name, m in (("param-only", p), ("identity", i), ("twice", t)):
            m.register_full_backward_hook(lambda mod, gi, go, n=name: log.append(
                (n, rec(gi), rec(go))))
        x = lib.ones(2, requires_grad=True)
        p(x).sum().backward()
        (i(x) * 3).sum().backward()
        a, _ = t(x)
        (a * 2).sum().backward()
        return log, rec((x.grad, p.w.grad))
    same(run)


def test_hooks_with_create_graph_and_double_backward():
    def run(lib):
        log = []

        class Cube(lib.nn.Module):
            def forward(self, x):
                return x ** 3
        m = Cube()
        m.register_full_backward_pre_hook(lambda mod, go: log.append(
            ("pre", go[0].requires_grad)))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(
            ("hook", gi[0].requires_grad, rec(gi))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(m(x).sum(), x, create_graph=True)
        # the second pass reaches the inputs' node without passing the outputs': no hook
        (g2,) = lib.autograd.grad(g.sum(), x)
        return log, rec((g, g2)), g.grad_fn is not None
    same(run)


def test_module_output_graph_is_freed_without_the_cycle_collector():
    import gc
    import weakref
    gc.disable()
    try:
        for lib in LIBS:
            m = lib.nn.Linear(2, 2)
            m.register_full_backward_hook(lambda *a: None)
            x = lib.ones(2, requires_grad=True)
            y = m(x)
            ref = weakref.ref(y.grad_fn)
            del y
            assert ref() is None
            y = m(x)
            y.sum().backward()
            ref = weakref.ref(y.grad_fn)
            del y
            assert ref() is None
    finally:
        gc.enable()
