"""torchjax.jit: TorchScript's decorators, as no-ops, so scripted code runs eagerly.

script and trace return what they are given (trace runs nothing and records nothing: the
function or module stays a Python one); ignore / unused / export mark nothing; is_scripting()
and is_tracing() are False. Compile with torchjax.compile instead. Saving and loading
TorchScript archives (jit.save / jit.load) is not supported: save a state_dict.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Final

from .nn.modules.module import Module

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "Final", "annotate", "ScriptModule", "ScriptFunction", "script_method",
           "interface", "freeze", "optimize_for_inference", "fork", "wait", "save", "load",
           "Attribute", "isinstance", "optimized_execution", "enable_onednn_fusion",
           "set_fusion_strategy"]

_isinstance = isinstance


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """`obj` itself: torchjax runs it as Python (torchjax.compile compiles it)."""
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """`func` itself, untraced: example_inputs are not run, and calls stay Python calls."""
    return func


def trace_module(mod, inputs=None, *args, **kwargs):
    """`mod` itself, untraced."""
    return mod


def _marker(fn=None, **kwargs):
    # used both as @ignore and as @ignore(drop=True)
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


ignore = unused = export = script_method = interface = _marker


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    return the_value


def Attribute(value, type=None):
    return value


def isinstance(obj, target_type) -> bool:  # noqa: A001
    return _isinstance(obj, target_type)


ScriptModule = Module
ScriptFunction = type(lambda: None)


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def fork(func, *args, **kwargs) -> Future:
    """Runs func now and returns its finished future (TorchScript would run it in parallel)."""
    fut: Future = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except BaseException as e:
        fut.set_exception(e)
    return fut


def wait(future):
    return future.result()


def _no_archives(name: str):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(
            f"torch.jit.{name} is not supported by torchjax: TorchScript archives cannot be "
            f"written or read; save the state_dict with torch.save and load it into the "
            f"Python model")
    unsupported.__name__ = name
    return unsupported


save = _no_archives("save")
load = _no_archives("load")


class optimized_execution:
    """A context manager that changes nothing (XLA always optimizes)."""

    def __init__(self, should_optimize: bool = True):
        self.should_optimize = should_optimize

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def enable_onednn_fusion(enabled: bool) -> None:
    pass


def set_fusion_strategy(strategy):
    return strategy
