"""torch.OutOfMemoryError and torch.AcceleratorError: the exception classes scripts catch.

As in PyTorch both are RuntimeError subclasses, so `except RuntimeError` still catches them.
A script writes `except torch.OutOfMemoryError:` (or torch.cuda.OutOfMemoryError, the same
class) around a step to retry with a smaller batch; the name must exist for that except clause
to be valid. torchjax does not translate XLA's own errors into them: JAX raises its
XlaRuntimeError (RESOURCE_EXHAUSTED), which is also a RuntimeError.
"""

from __future__ import annotations

__all__ = ["OutOfMemoryError", "AcceleratorError"]


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory."""


class AcceleratorError(RuntimeError):
    """An accelerator reported an error."""


OutOfMemoryError.__module__ = AcceleratorError.__module__ = "torch"
