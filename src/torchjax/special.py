"""torchjax.special: PyTorch's torch.special, published from the op table's torch.special rows
(named like PyTorch's native functions, "special_<name>") and the plain functions below."""

from ._dispatch import namespace_functions as _namespace_functions

globals().update(_namespace_functions("torch.special"))
