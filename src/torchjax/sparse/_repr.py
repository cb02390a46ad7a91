"""repr() of a sparse COO tensor, as PyTorch prints it:

    tensor(indices=tensor([[0, 1],
                           [1, 0]]),
           values=tensor([2., 3.]),
           size=(2, 2), nnz=2, layout=torch.sparse_coo)
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes
from .._printing import _OPTS, _tensor_body, _widen


def _body(arr: np.ndarray, dtype_name: str, indent: int) -> str:
    if arr.size == 0:
        return f"[], size={tuple(arr.shape)}"
    values, kind = _widen(arr, dtype_name)
    return _tensor_body(values, kind, indent)


def sparse_repr(t) -> str:
    prefix = "tensor("
    indent = len(prefix)
    try:
        idx = np.asarray(t._data.bcoo.indices).T
        vals = np.asarray(t._data.bcoo.data)
    except Exception:  # traced values: nothing to show
        return f"tensor(<traced>, size={tuple(t.shape)}, layout=torch.sparse_coo)"
    ind_prefix, val_prefix = "indices=tensor(", "values=tensor("
    body = (ind_prefix + _body(idx, "int64", indent + len(ind_prefix)) + "),\n" + " " * indent
            + val_prefix + _body(vals, t.dtype.name, indent + len(val_prefix)) + ")")
    default = _dtypes.get_default_dtype().name
    default_complex = "complex128" if default == "float64" else "complex64"
    suffixes = [f"size={tuple(t.shape)}", f"nnz={vals.shape[0]}"]
    if t.dtype.name not in (default, default_complex, "int64", "bool"):
        suffixes.append(f"dtype=torch.{t.dtype.name}")
    suffixes.append("layout=torch.sparse_coo")
    device = str(t.device)
    if device != "cpu":
        suffixes.insert(0, f"device='{device}'")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)


def _with_suffixes(body: str, suffixes: list, indent: int) -> str:
    """PyTorch's suffix wrapping with its force_newline for sparse tensors: the first suffix
    always starts a line."""
    parts = [body]
    last = len(body) - body.rfind("\n") + 1
    force = True
    for s in suffixes:
        if force or last + len(s) + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
            force = False
        else:
            parts.append(", " + s)
            last += len(s) + 2
    parts.append(")")
    return "".join(parts)
