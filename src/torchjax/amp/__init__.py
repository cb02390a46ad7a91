"""torchjax.amp: automatic mixed precision (autocast, GradScaler), as torch.amp.

`autocast(device_type, dtype=)` runs PyTorch's listed ops in lower precision inside a
region; `GradScaler` scales the loss so float16 gradients do not underflow, and skips the
optimizer step when a gradient is inf or NaN. As in PyTorch, asking for CUDA autocast or a
CUDA GradScaler on a machine without a GPU warns and disables it, so the usual
`GradScaler()` / `autocast("cuda")` scripts run on CPU. See docs/amp.md.
"""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
