"""torchjax.utils.data: datasets, samplers and DataLoader with PyTorch's behaviour."""

__all__: list[str] = []
