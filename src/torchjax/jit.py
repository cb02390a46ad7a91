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
    """A TorchScript decorator (`export`, `ignore`, `unused`, `interface`, `script_method`) as a no-op.

    Used as `@decorator` or `@decorator(...)`, it returns the function unchanged, so scripted code runs eagerly.

    See https://pytorch.org/docs/stable/generated/torch.jit.ignore.html.
    """
    # used both as @ignore and as @ignore(drop=True)
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


ignore = unused = export = script_method = interface = _marker


def is_scripting() -> bool:
    """Always False: torchjax never runs code as TorchScript.

    See https://pytorch.org/docs/stable/generated/torch.jit.is_scripting.html.
    """
    return False


def is_tracing() -> bool:
    """Always False: `torch.jit.trace` does not trace in torchjax.

    See https://pytorch.org/docs/stable/generated/torch.jit.is_tracing.html.
    """
    return False


def annotate(the_type, the_value):
    """Returns `the_value` unchanged: a type hint for TorchScript, which torchjax does not compile.

    See https://pytorch.org/docs/stable/generated/torch.jit.annotate.html.
    """
    return the_value


def Attribute(value, type=None):
    """Returns `value` unchanged: a TorchScript attribute annotation.

    See https://pytorch.org/docs/stable/generated/torch.jit.Attribute.html.
    """
    return value


def isinstance(obj, target_type) -> bool:  # noqa: A001
    """Python's `isinstance`, as TorchScript's refinement helper behaves in eager code.

    See https://pytorch.org/docs/stable/generated/torch.jit.isinstance.html.
    """
    return _isinstance(obj, target_type)


ScriptModule = Module
ScriptFunction = type(lambda: None)


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True):
    """Returns the module unchanged (there is no TorchScript module to freeze).

    See https://pytorch.org/docs/stable/generated/torch.jit.freeze.html.
    """
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Returns the module unchanged; compile it with `torchjax.compile` for speed.

    See https://pytorch.org/docs/stable/generated/torch.jit.optimize_for_inference.html.
    """
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
    """The result of a future from `torch.jit.fork` (which runs the call at once in torchjax).

    See https://pytorch.org/docs/stable/generated/torch.jit.wait.html.
    """
    return future.result()


def _no_archives(name: str):
    def unsupported(*args, **kwargs):
        """Raises NotImplementedError: torchjax cannot write or read TorchScript archives.

        Save the state_dict with `torchjax.save` and load it into the Python model instead.
        """
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
    """Accepted and ignored: XLA decides fusion itself.

    See https://pytorch.org/docs/stable/generated/torch.jit.enable_onednn_fusion.html.
    """
    pass


def set_fusion_strategy(strategy):
    """Accepted and returned unchanged: XLA decides fusion itself.

    See https://pytorch.org/docs/stable/generated/torch.jit.set_fusion_strategy.html.
    """
    return strategy
