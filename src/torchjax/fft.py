"""torchjax.fft: PyTorch's torch.fft, published from the op table's torch.fft rows
(named like PyTorch's native functions, "fft_<name>") and the plain functions below."""

from ._dispatch import namespace_functions as _namespace_functions

globals().update(_namespace_functions("torch.fft"))
