"""torchjax.linalg: PyTorch's torch.linalg, published from the op table's torch.linalg rows
(named like PyTorch's native functions, "linalg_<name>") and the plain functions below."""

from ._dispatch import namespace_functions as _namespace_functions

globals().update(_namespace_functions("torch.linalg"))
