"""Module hooks against PyTorch: forward (pre-)hooks, mixing full and legacy backward hooks,
legacy backward hooks and their global forms (full backward hooks: test_hooks_backward.py;
in-place writes and other graph shapes: test_hooks_graphs.py). Each scenario runs the same
code with both libraries, records what the hooks saw and in which order, and compares the
records."""

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
