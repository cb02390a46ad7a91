"""Op-table rows: scatter, index_* writes, put and take."""

from __future__ import annotations
