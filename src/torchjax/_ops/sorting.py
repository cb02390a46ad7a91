"""Op-table rows: sorting, selection, unique and searching."""

from __future__ import annotations
