"""torchjax.backends.cudnn: cuDNN's flags, kept for scripts; XLA chooses GPU kernels itself.

`deterministic` has no switch to reach at run time: XLA's GPU ops are made deterministic with
XLA_FLAGS=--xla_gpu_deterministic_ops=true before the process starts (CPU results already are).
"""

from __future__ import annotations

import sys

from ._flags import set_flags

__all__ = ["enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32",
           "is_available", "version", "flags"]

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """True when JAX has a GPU: XLA then runs convolutions through cuDNN."""
    from .. import cuda
    return cuda.is_available()


def version() -> int | None:
    """cuDNN's version as PyTorch reports it; None, as torchjax does not link cuDNN itself."""
    return None


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the flags inside a `with` block and restore them after it."""
    return set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                     benchmark_limit=benchmark_limit, deterministic=deterministic,
                     allow_tf32=allow_tf32)
