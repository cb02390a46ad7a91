"""Op-table rows: torch.fft rows."""

from __future__ import annotations
