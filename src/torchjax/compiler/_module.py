"""torchjax.compile(model): a Module whose calls run the original module compiled.

As PyTorch's OptimizedModule: the original is kept as the `_orig_mod` submodule, so the
parameters are the original's (an optimizer made from either sees the same tensors) and
state_dict keys carry the `_orig_mod.` prefix; unknown attributes are read from the original.
"""

from __future__ import annotations

from ..nn.modules.module import Module
from ._compiled import CompiledFunction


class OptimizedModule(Module):
    def __init__(self, mod: Module, **options):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", CompiledFunction(
            mod, name=type(mod).__name__, **options))

    def forward(self, *args, **kwargs):
        """Runs the wrapped module through its compiled program (tracing and compiling on the first
        call for new input shapes).
        """
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)
