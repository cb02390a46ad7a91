"""torchjax.amp: automatic mixed precision's API (autocast, GradScaler).

torchjax does not cast ops to lower precision by itself yet, so an *enabled* autocast or
GradScaler raises NotImplementedError naming the feature, and a disabled one is a no-op.
As in PyTorch, asking for CUDA autocast / a CUDA GradScaler on a machine without a GPU warns
and disables it, so the usual `GradScaler()` / `autocast("cuda")` scripts run on CPU.
To train in lower precision, cast the model and inputs yourself: `model.to(torch.bfloat16)`.
"""

from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
