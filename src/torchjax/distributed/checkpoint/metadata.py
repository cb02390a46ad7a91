"""torch.distributed.checkpoint.metadata's names for what a checkpoint holds: each key's
tensor size, dtype and saved pieces, or that it is an object saved as bytes."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Metadata", "TensorStorageMetadata", "BytesStorageMetadata",
           "ChunkStorageMetadata", "TensorProperties"]


@dataclass
class ChunkStorageMetadata:
    """One saved piece of a tensor: where it starts and its sizes."""

    offsets: tuple
    sizes: tuple


@dataclass
class TensorProperties:
    """A saved tensor's dtype (PyTorch's other properties are its defaults here)."""

    dtype: object
    requires_grad: bool = False


@dataclass
class TensorStorageMetadata:
    """A tensor of the checkpoint: its dtype, global size and pieces."""

    properties: TensorProperties
    size: tuple
    chunks: list = field(default_factory=list)


@dataclass
class BytesStorageMetadata:
    """An object of the checkpoint saved as bytes (torch.save's)."""


@dataclass
class Metadata:
    """What dcp.save returns: every key of the (flattened) state dict it saved."""

    state_dict_metadata: dict
    storage_data: object = None
