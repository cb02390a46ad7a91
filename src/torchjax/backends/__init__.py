"""torchjax.backends: PyTorch's backend switches, as settable flags.

XLA picks its own kernels (there is no cuDNN, MKL-DNN or OpenMP switch to turn), so the flags
are accepted and kept for the scripts that set and read them, and change no computation; the
`is_available()` functions say what torchjax itself offers. docs/coverage.md lists each one.

    import torchjax as torch
    torch.backends.cudnn.benchmark = True
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum, xla

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum", "xla"]
