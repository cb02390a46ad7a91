"""Flatten and Unflatten."""

from __future__ import annotations

__all__ = ["Flatten", "Unflatten"]

from .module import Module


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        """Applies the Flatten layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        """The settings Flatten shows inside its `repr`, such as its sizes and flags."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim into unflattened_size (a tuple or list of ints; one may be -1)."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        _require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        """Applies the Unflatten layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        """The settings Unflatten shows inside its `repr`, such as its sizes and flags."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _require_tuple_int(size) -> None:
    # PyTorch 2.13 dropped named sizes (("C", 2), ...): only ints are accepted
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                        f"{type(size).__name__}")
    for i, d in enumerate(size):
        if not isinstance(d, int):
            raise TypeError("unflattened_size must be tuple of ints, but found element of type "
                            f"{type(d).__name__} at pos {i}")
