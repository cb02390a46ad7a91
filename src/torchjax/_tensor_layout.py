"""Tensor's memory layout as PyTorch reports it (strides, storage offset, contiguity): XLA's
arrays have none, torchjax tracks it for views (_strides.py). A base class of Tensor kept in
its own file, as _tensor_host.py and _tensor_convert.py keep theirs."""

from __future__ import annotations

from . import _memory_format, _strides


class _Layout:
    """The layout queries of Tensor (which adds the data and view state they read)."""

    __slots__ = ()

    def stride(self, dim: int | None = None):
        """The strides PyTorch would report, or the stride of dimension `dim`; torchjax tracks them
        for views (XLA's arrays have no strides of their own).
        """
        strides = _strides.of(self)[0]
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, len(strides))]

    def storage_offset(self) -> int:
        """The offset, in elements, of this view's first element in its base's storage, as PyTorch
        would report it.
        """
        return _strides.of(self)[1]

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the tracked strides are those of a contiguous tensor in `memory_format`
        (row-major by default).
        """
        # (shape_of: a pending tensor's strides need no run of its sequence)
        shape = _strides.shape_of(self)
        if self._layout is None:
            return memory_format in (None, _memory_format.contiguous_format) or \
                _strides.is_contiguous(shape, _strides.contiguous_strides(shape),
                                       memory_format)
        return _strides.is_contiguous(shape, self.stride(), memory_format)

    def is_non_overlapping_and_dense(self) -> bool:
        """Whether the tracked strides cover a block of memory without gaps or overlaps."""
        return _strides.non_overlapping_and_dense(_strides.shape_of(self), self.stride())

    def dim_order(self, *, ambiguity_check=False) -> tuple:
        """The dims from outermost to innermost in memory (a permutation of range(dim())).

        ambiguity_check=True raises when the order is not unique (a size-1 dim, equal
        strides); a list of memory formats also accepts a tensor contiguous in exactly one.
        """
        formats = ambiguity_check if not isinstance(ambiguity_check, bool) else []
        if not isinstance(ambiguity_check, bool):
            if not isinstance(ambiguity_check, list) or not all(
                    isinstance(f, _memory_format.memory_format) for f in formats):
                raise TypeError("The ambiguity_check argument must be a bool or a list of "
                                "memory formats.")
        shape, strides = tuple(self.shape), self.stride()  # (shape: a pending tensor is not run)
        if ambiguity_check is not False and (
                any(n == 1 for n in shape) or any(a == b for a, b in zip(strides, strides[1:]))) \
                and sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
        perm, ambiguous = _strides.dim_order(shape, strides, bool(ambiguity_check))
        if ambiguous:
            raise RuntimeError("The tensor does not have unique dim order.")
        return tuple(perm)

    def contiguous(self, memory_format=_memory_format.contiguous_format) -> _Layout:
        """self when already laid out in memory_format, else a copy that is (a new tensor,
        not a view: writes to it do not reach self)."""
        if memory_format is _memory_format.preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous "
                               "operator")
        if self.is_contiguous(memory_format):
            return self
        return self.clone(memory_format=memory_format)


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n
