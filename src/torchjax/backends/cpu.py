"""torchjax.backends.cpu: the CPU vector extensions PyTorch's kernels were picked for."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """XLA compiles for the host CPU itself, so there is no fixed capability: "DEFAULT"."""
    return "DEFAULT"
