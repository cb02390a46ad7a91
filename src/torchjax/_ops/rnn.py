"""Recurrent rows: one tape node per recurrent layer over a whole sequence."""

from __future__ import annotations
