"""torch.nn.attention: the scaled-dot-product-attention backend switch (`SDPBackend`,
`sdpa_kernel`) that recent scripts wrap their attention in.

XLA chooses how it computes F.scaled_dot_product_attention, so the backends asked for are
checked and recorded (`current_backends()`) but change no result: PyTorch's CPU build also
computes the same values whichever of them is asked for.
"""

from __future__ import annotations

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.Enum):
    """The backends PyTorch can run scaled_dot_product_attention with (an enum of ints that,
    as PyTorch's, converts with int() but does not compare equal to one)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


_ALL = [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_ACTIVE = [list(_ALL)]


def current_backends() -> list:
    """The backends the innermost `sdpa_kernel` allows (all of them outside one)."""
    return list(_ACTIVE[-1])


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """`with sdpa_kernel(SDPBackend.FLASH_ATTENTION):` or a list of backends (in priority
    order with set_priority=True). Accepted and recorded; XLA picks the kernel."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    _ACTIVE.append(list(dict.fromkeys(backends)))
    try:
        yield
    finally:
        _ACTIVE.pop()
