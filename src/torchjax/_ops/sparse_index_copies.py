"""The compressed-layout index accessors (Tensor.crow_indices, col_indices, ccol_indices,
row_indices) and torch.indices_copy, values_copy and the *_indices_copy functions.

torchjax has no compressed sparse layouts (CSR, CSC, BSR, BSC; docs/coverage.md), so no tensor
has compressed indices: the accessors raise PyTorch's error for a tensor of another layout. The
_copy functions are PyTorch's functionalization forms, which PyTorch 2.13 runs on no CPU
tensor: a dense one gets the accessor's layout error, a sparse COO one "Could not run
'aten::<name>_copy' with arguments from the 'SparseCPU' backend". torchjax raises the same (for
a COO tensor's indices or values use indices() / values() and clone()).
"""

from __future__ import annotations

from ._registry import function

# accessor -> the layout PyTorch's error says it expects
_EXPECTED = {"indices": "sparse coordinate tensor", "values": "sparse tensor",
             "crow_indices": "sparse row compressed tensor",
             "col_indices": "sparse row compressed tensor",
             "ccol_indices": "sparse column compressed tensor",
             "row_indices": "sparse column compressed tensor"}


def _layout_error(name: str, t) -> RuntimeError:
    got = "Sparse" if t.is_sparse else "Strided"
    return RuntimeError(f"{name} expected {_EXPECTED[name]} layout but got {got}")


def _accessor(name):
    def read(self):
        raise _layout_error(name, self)
    read.__name__ = read.__qualname__ = name
    read.__doc__ = f"Raises: torchjax has no compressed sparse tensors to take {name} of."
    return function(name, function=False)(read)


def _copy(name):
    def copy(input):
        if input.is_sparse:
            raise NotImplementedError(
                f"Could not run 'aten::{name}_copy' with arguments from the "
                f"'Sparse{input.device.type.upper()}' backend (PyTorch has no kernel for it; "
                f"use {name}().clone())")
        raise _layout_error(name, input)
    copy.__name__ = copy.__qualname__ = f"{name}_copy"
    copy.__doc__ = f"input.{name}() as a new tensor: raises, as PyTorch 2.13 does on CPU."
    return function(f"{name}_copy", method=False)(copy)


crow_indices, col_indices, ccol_indices, row_indices = (
    _accessor(n) for n in ("crow_indices", "col_indices", "ccol_indices", "row_indices"))
(indices_copy, values_copy, crow_indices_copy, col_indices_copy, ccol_indices_copy,
 row_indices_copy) = (_copy(n) for n in _EXPECTED)
