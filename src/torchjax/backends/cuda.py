"""torchjax.backends.cuda: CUDA math switches (TF32, reduced-precision reductions, attention
kernels), kept for scripts; XLA decides GPU precision and kernels itself."""

from __future__ import annotations

import contextlib

__all__ = ["matmul", "is_built", "enable_flash_sdp", "flash_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "enable_math_sdp",
           "math_sdp_enabled", "enable_cudnn_sdp", "cudnn_sdp_enabled", "sdp_kernel",
           "preferred_linalg_library"]


class _Matmul:
    """torch.backends.cuda.matmul: settable precision flags for float32 / half matmuls."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "ieee"

    def __repr__(self) -> str:
        return f"torch.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = _Matmul()

# scaled_dot_product_attention has one implementation in torchjax; the switches are recorded
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """True when JAX has a CUDA backend (PyTorch: when it was built with CUDA)."""
    from .. import cuda
    return cuda.is_available()


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Set the attention switches inside a `with` block and restore them after it."""
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """Accepted and ignored: XLA's linear algebra has one implementation per platform."""
    return backend
