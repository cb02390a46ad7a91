"""Op-table rows: structural ops: triangles, diagonals, flips, rolls, tiling, stacking and splitting."""

from __future__ import annotations
