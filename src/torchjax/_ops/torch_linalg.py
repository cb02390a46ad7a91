"""Op-table rows: torch.linalg rows and the torch.* linear algebra built on them."""

from __future__ import annotations
