"""torch.layout: the memory layouts PyTorch names (torch.strided, torch.sparse_coo, ...).

Factories take `layout=`; torchjax's dense tensors are all torch.strided, and a sparse layout
asked of a dense factory is an error naming the supported way.
"""

from __future__ import annotations


class layout:
    """A tensor memory layout; compared by identity, printed as torch.<name>."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name  # pickles as the module attribute of that name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")

LAYOUTS = (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged)


def check(value, fname: str) -> None:
    """A factory's layout= argument: None or torch.strided."""
    if value is None or value is strided:
        return
    if not isinstance(value, layout):
        raise TypeError(f"{fname}(): argument 'layout' must be torch.layout, not "
                        f"{type(value).__name__}")
    raise NotImplementedError(f"{fname}(layout={value!r}) is not supported by torchjax: make a "
                              f"dense tensor and convert it (for example with .to_sparse())")
