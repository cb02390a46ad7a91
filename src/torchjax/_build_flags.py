"""torch.has_lapack, has_mkl, has_openmp, has_spectral: what PyTorch's build was compiled with.

Scripts test them to pick a code path (has_lapack before torch.linalg, has_spectral before
torch.fft). Each says whether torchjax provides what the flag guards, not how XLA was built:
linear algebra and FFTs exist on every JAX backend, so has_lapack and has_spectral are True.
has_mkl guards MKL-only paths (mkldnn kernels, torch.backends.mkl) and has_openmp guards
OpenMP thread settings; torchjax has neither, so they are False.
"""

from __future__ import annotations

__all__ = ["has_lapack", "has_mkl", "has_openmp", "has_spectral"]

has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False
