"""torchjax.backends.opt_einsum: contraction-order search for einsum.

torchjax's einsum is jax.numpy.einsum, which always orders contractions with the opt_einsum
package (a JAX dependency); `enabled` and `strategy` are kept for scripts.
"""

from __future__ import annotations

import sys

from ._flags import set_flags

__all__ = ["enabled", "strategy", "is_available", "get_opt_einsum", "flags"]

enabled = True
strategy = "auto"


def is_available() -> bool:
    return get_opt_einsum() is not None


def get_opt_einsum():
    """The opt_einsum module, or None when it is not installed."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def flags(enabled=None, strategy=None):
    """Set `enabled` / `strategy` inside a `with` block and restore them after it."""
    return set_flags(sys.modules[__name__], enabled=enabled, strategy=strategy)
