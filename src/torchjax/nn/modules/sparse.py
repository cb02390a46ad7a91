"""Embedding and EmbeddingBag."""

from __future__ import annotations

__all__ = ["Embedding", "EmbeddingBag"]

from ... import _creation
from ..._autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _wrap_padding_idx(padding_idx, num_embeddings: int, name: str):
    """A negative padding_idx counts from the end; out of range is PyTorch's AssertionError."""
    if padding_idx is None:
        return None
    if padding_idx >= num_embeddings or padding_idx < -num_embeddings:
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def _given_weight(weight, num_embeddings: int, embedding_dim: int, requires_grad: bool):
    if list(weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
    return Parameter(weight, requires_grad=requires_grad)


def _check_pretrained(embeddings):
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
    return embeddings.shape


class _EmbeddingBase(Module):
    def reset_parameters(self) -> None:
        """Refills the weight from a standard normal (torchjax's global generator) and zeroes the
        `padding_idx` row.
        """
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _new_weight(self, weight, device, dtype, requires_grad=True):
        if weight is None:
            self.weight = Parameter(_creation.empty((self.num_embeddings, self.embedding_dim),
                                                    dtype=dtype, device=device),
                                    requires_grad=requires_grad)
            self.reset_parameters()
        else:
            self.weight = _given_weight(weight, self.num_embeddings, self.embedding_dim,
                                        requires_grad)


class Embedding(_EmbeddingBase):
    """A lookup table of num_embeddings vectors of size embedding_dim, initialised N(0, 1)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _wrap_padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self._new_weight(_weight, device, dtype, requires_grad=not _freeze)
        self.sparse = sparse

    def forward(self, input):
        """Applies the Embedding layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        """The settings Embedding shows inside its `repr`, such as its sizes and flags."""
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is `embeddings` (frozen unless freeze=False)."""
        rows, cols = _check_pretrained(embeddings)
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_EmbeddingBase):
    """Sums, means or maxima of bags of embeddings, without materialising each bag's rows."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _wrap_padding_idx(padding_idx, num_embeddings, "padding_idx")
        self._new_weight(_weight, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        """Applies the EmbeddingBag layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        # PyTorch formats these fields with repr(): mode='mean'
        """The settings EmbeddingBag shows inside its `repr`, such as its sizes and flags."""
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is `embeddings` (frozen unless freeze=False)."""
        rows, cols = _check_pretrained(embeddings)
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
