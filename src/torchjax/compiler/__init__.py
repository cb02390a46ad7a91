"""torchjax.compile and torchjax.compiler: a whole PyTorch step as one XLA program.

    @torchjax.compile
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        return loss

The first call of each signature traces the Python function once with `jax.make_jaxpr`
(`_trace`), discovering the state it reads and writes; later calls gather that state, run
one jitted program and write the results back into the same Tensor objects (`_program`).
See docs/compile.md.
"""

from __future__ import annotations

import functools
import warnings
import weakref

from ..nn.modules.module import Module
from . import config
from ._breaks import GraphBreak, Unsupported
from ._compiled import CompiledFunction, is_compiling
from ._explain import ExplainOutput, explain
from ._markers import (
    allow_in_graph,
    assume_constant_result,
    cudagraph_mark_step_begin,
    is_dynamo_compiling,
    is_exporting,
)
from ._module import OptimizedModule

__all__ = ["compile", "CompiledFunction", "OptimizedModule", "Unsupported", "GraphBreak",
           "is_compiling", "disable", "reset", "explain", "ExplainOutput", "config",
           "allow_in_graph", "assume_constant_result", "is_dynamo_compiling", "is_exporting",
           "cudagraph_mark_step_begin"]

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = (None, "inductor", "xla", "jax", "openxla", "eager", "aot_eager")
_COMPILED: list = []  # weak bookkeeping for reset(): compiled functions made so far


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend=None, mode: str | None = None, options: dict | None = None,
            disable: bool = False, donate: bool = True):
    """Compile a function or Module into one XLA program per call signature.

    PyTorch's torch.compile signature. `backend` and `mode` choose among Inductor's
    strategies in PyTorch; here XLA always compiles the whole traced step, so the Inductor
    names ("inductor", None) and every `mode` are accepted and mean the same thing, and
    "eager"/"aot_eager" run the function uncompiled (PyTorch's debugging backends). A custom
    backend callable is not supported. `options` (Inductor settings) have no effect on XLA:
    passing any warns. `dynamic`: XLA programs have static shapes, so every new input shape
    is a new program whatever `dynamic` says (each counts toward config.recompile_limit).
    `donate=False` keeps the old state arrays alive (no buffer donation).
    """
    if model is None:
        def wrap(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable, donate=donate)
        return wrap
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if mode is not None and options:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if callable(backend) or backend not in _BACKENDS:
        raise NotImplementedError(
            f"torchjax.compile: backend={backend!r} is not supported; torchjax compiles with "
            "XLA (backend=None or 'inductor' mean the same), or runs eagerly with "
            "backend='eager'")
    if options:
        warnings.warn(f"torchjax.compile: options {sorted(options)} are Inductor settings and "
                      "have no effect on XLA", stacklevel=2)
    if disable or backend in ("eager", "aot_eager"):
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic, donate=donate)
    if not callable(model):
        raise RuntimeError("torch.compile: model must be a callable, got "
                           f"{type(model).__name__}")
    fn = CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic, donate=donate)
    _COMPILED.append(weakref.ref(fn))
    return fn


def disable(fn=None, recursive: bool = True, *, reason: str | None = None):
    """torch.compiler.disable: `fn` is never traced; a compiled function that calls it
    breaks its graph there (runs eagerly), and fn runs as plain Python."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if is_compiling():
            why = f" ({reason})" if reason else ""
            raise GraphBreak(f"{getattr(fn, '__qualname__', fn)} is marked "
                             f"torch.compiler.disable{why}")
        return fn(*args, **kwargs)
    return run


def reset() -> None:
    """Forget every compiled program (torch.compiler.reset / torch._dynamo.reset)."""
    for ref in _COMPILED:
        fn = ref()
        if fn is not None:
            fn.reset()
    _COMPILED[:] = [r for r in _COMPILED if r() is not None]
