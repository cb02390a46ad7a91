"""torch.fx.passes.shape_prop: ShapeProp records each node's tensor metadata as it runs."""

from __future__ import annotations

from typing import NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    shape: object
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


def _extract(t) -> TensorMetadata:
    import torchjax
    memory_format = None
    for fmt in (torchjax.contiguous_format, torchjax.channels_last,
                torchjax.channels_last_3d):
        try:
            if t.is_contiguous(memory_format=fmt):
                memory_format = fmt
                break
        except (RuntimeError, ValueError):
            continue
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """`ShapeProp(gm).propagate(*inputs)` sets node.meta['tensor_meta'] (and meta['type'])."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)

    def run_node(self, n):
        import torchjax
        result = super().run_node(n)
        found = [False]

        def meta(x):
            if isinstance(x, torchjax.Tensor):
                found[0] = True
                return _extract(x)
            return x
        tensor_meta = map_aggregate(result, meta)
        if found[0]:
            n.meta["tensor_meta"] = tensor_meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)
