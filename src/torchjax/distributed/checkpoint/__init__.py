"""torchjax.distributed.checkpoint: PyTorch's distributed checkpointing (dcp).

`save(state_dict, checkpoint_id=dir)` writes a sharded state dict, each process its own
pieces, and `load(state_dict, checkpoint_id=dir)` reads it back into the given state dict's
tensors in place, resharded onto their layouts (FileSystemWriter / FileSystemReader name the
directory; the files are torchjax's, safetensors plus a JSON index: filesystem.py).
`state_dict` has get/set_model_state_dict, get/set_optimizer_state_dict and
get/set_state_dict, the FQN-keyed state dicts these are made for."""

from . import (
    default_planner,
    filesystem,
    format_utils,
    metadata,
    state_dict,
    state_dict_loader,
    state_dict_saver,
    stateful,
)
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import (
    BytesStorageMetadata,
    ChunkStorageMetadata,
    Metadata,
    TensorProperties,
    TensorStorageMetadata,
)
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import async_save, save, save_state_dict
from .stateful import Stateful

__all__ = ["save", "load", "async_save", "save_state_dict", "load_state_dict",
           "FileSystemWriter", "FileSystemReader", "DefaultSavePlanner", "DefaultLoadPlanner",
           "Stateful", "Metadata", "TensorStorageMetadata", "BytesStorageMetadata",
           "ChunkStorageMetadata", "TensorProperties", "state_dict", "state_dict_saver", "state_dict_loader",
           "filesystem", "format_utils", "metadata", "default_planner", "stateful"]
