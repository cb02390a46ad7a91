"""Normalization rows (batch_norm, layer_norm, group_norm, instance_norm, local_response_norm, rms_norm), dropout and embedding."""

from __future__ import annotations
