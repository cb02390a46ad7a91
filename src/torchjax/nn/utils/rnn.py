"""torchjax.nn.utils.rnn: PackedSequence and the helpers that pack, pad and unpad batches of
variable-length sequences.

Lengths and batch sizes are small CPU integers read as Python values; the data moves through
single rows of the op table (one tape node each), driven by index maps built with numpy.
"""

from __future__ import annotations

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

from collections.abc import Iterable
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ... import _creation, _dtypes
from ..._dispatch import call_op
from ..._ops.rnn import packed_rows
from ..._tensor import Tensor


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The data and batch sizes of a packed batch of variable-length sequences.

    data holds step 0 of every sequence, then step 1 of those still running, and so on;
    batch_sizes[t] is how many sequences have a step t. sorted_indices orders the original
    batch by decreasing length, unsorted_indices undoes it (None when the batch was sorted).
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Move or cast data (Tensor.to's arguments); the indices follow data's device and
        batch_sizes stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices, unsorted_indices = (None if t is None else t.to(data.device)
                                            for t in (self.sorted_indices,
                                                      self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, device=None, non_blocking=False):
        """This PackedSequence with its data moved to `device` (a CUDA device by default) via `to`.
        """
        return self.to("cuda" if device is None else device)

    def cpu(self):
        """This PackedSequence with its data on the CPU."""
        return self.to("cpu")

    def double(self):
        """This PackedSequence with its data cast to float64."""
        return self.to(dtype=_dtypes.float64)

    def float(self):
        """This PackedSequence with its data cast to float32."""
        return self.to(dtype=_dtypes.float32)

    def half(self):
        """This PackedSequence with its data cast to float16."""
        return self.to(dtype=_dtypes.float16)

    def long(self):
        """This PackedSequence with its data cast to int64."""
        return self.to(dtype=_dtypes.int64)

    def int(self):
        """This PackedSequence with its data cast to int32."""
        return self.to(dtype=_dtypes.int32)

    def short(self):
        """This PackedSequence with its data cast to int16."""
        return self.to(dtype=_dtypes.int16)

    def char(self):
        """This PackedSequence with its data cast to int8."""
        return self.to(dtype=_dtypes.int8)

    def byte(self):
        """This PackedSequence with its data cast to uint8."""
        return self.to(dtype=_dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device."""
        return self.data.is_cuda


def invert_permutation(permutation):
    """The inverse permutation (None for None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _long_cpu(values) -> Tensor:
    return _creation.tensor(np.asarray(values, dtype=np.int64), dtype=_dtypes.int64)


def _check_lengths(lengths, batch: int, steps: int, enforce_sorted: bool) -> list:
    if lengths.dim() != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor")
    lens = lengths.tolist()
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if enforce_sorted and any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability.")
    if lens[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({lens[0]}) exceeds the padded "
                           f"sequence length ({steps})")
    return lens


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) ((B, T, *) with batch_first) of sequences with these
    lengths. With enforce_sorted=False the batch is sorted by decreasing length first."""
    if not isinstance(lengths, Tensor):
        lengths = _creation.as_tensor(lengths, dtype=_dtypes.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=_dtypes.int64)
    sorted_indices = None
    batch_dim = 0 if batch_first else 1
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(batch_dim, sorted_indices)
    steps, batch = input.shape[1 - batch_dim], input.shape[batch_dim]
    lens = _check_lengths(lengths, batch, steps, enforce_sorted)
    batch_sizes = (np.asarray(lens)[None, :] > np.arange(lens[0])[:, None]).sum(1)
    rows = packed_rows(batch_sizes)
    t, b = np.nonzero(rows >= 0)  # in packed order: step-major, then sequence
    flat = b * steps + t if batch_first else t * batch + b
    data = call_op("_pack_padded", input, Tensor._wrap(jnp.asarray(flat, jnp.int32)))
    return PackedSequence(data, _long_cpu(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded batch, lengths) from a PackedSequence, in the batch's original order, padded
    with padding_value to the longest sequence (or to total_length)."""
    batch_sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    steps = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    rows = packed_rows(batch_sizes)
    rows = np.concatenate([rows, np.full((steps - rows.shape[0], rows.shape[1]), -1, np.int32)])
    lengths = (rows >= 0).sum(0)
    padded = call_op("_pad_packed", sequence.data,
                     Tensor._wrap(jnp.asarray(rows.T if batch_first else rows)), padding_value)
    unsorted = sequence.unsorted_indices
    if unsorted is None:
        return padded, _long_cpu(lengths)
    order = np.asarray(unsorted.tolist(), dtype=np.int64)
    return padded.index_select(0 if batch_first else 1, unsorted), _long_cpu(lengths[order])


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences (L_i, *) into (max L, B, *) ((B, max L, *) with
    batch_first), filling with padding_value on padding_side ("right" or "left")."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    return call_op("_pad_sequence", sequences, batch_first, padding_value, padding_side)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    idx = _creation.arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of variable-length sequences (L_i, *)."""
    lengths = _creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a PackedSequence, in the original batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
