"""torch.pi, torch.e, torch.inf, torch.nan and torch.newaxis: the plain Python values PyTorch
exports (floats and None, as in math and numpy), which scripts write as `x[:, torch.newaxis]`
or `torch.full(..., -torch.inf)`."""

from __future__ import annotations

import math

__all__ = ["pi", "e", "inf", "nan", "newaxis"]

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None
