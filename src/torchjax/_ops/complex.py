"""Op-table rows: complex-number basics."""

from __future__ import annotations
