"""Op-table rows: special functions, bitwise ops and the torch.special rows."""

from __future__ import annotations
