"""Loss rows of torch.nn.functional."""

from __future__ import annotations
