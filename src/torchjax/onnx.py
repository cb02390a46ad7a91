"""torchjax.onnx: importable, but torchjax cannot export ONNX graphs yet.

To hand a model to another runtime, export it to a JAX function (torchjax.func.functionalize)
and use JAX's own export (jax.export) or a JAX-to-ONNX converter.
"""

from __future__ import annotations

__all__ = ["export", "dynamo_export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """Raised by the ONNX exporter (never, here: export raises NotImplementedError first)."""


def export(model, args=(), f=None, *posargs, **kwargs):
    """Raises NotImplementedError: torchjax cannot write ONNX graphs yet.

    Export a pure JAX function with `torchjax.func.functionalize` (and `jax.export`) instead.
    See https://pytorch.org/docs/stable/onnx.html.
    """
    raise NotImplementedError(
        "torch.onnx.export is not supported by torchjax: it cannot write ONNX graphs yet. "
        "Save the weights with torch.save, or export a pure JAX function with "
        "torchjax.func.functionalize and jax.export")


def dynamo_export(model, *args, **kwargs):
    """Raises NotImplementedError: torchjax cannot write ONNX graphs yet."""
    raise NotImplementedError(
        "torch.onnx.dynamo_export is not supported by torchjax: it cannot write ONNX graphs "
        "yet (see torch.onnx.export)")


def is_in_onnx_export() -> bool:
    """Always False: torchjax never runs an ONNX export."""
    return False
