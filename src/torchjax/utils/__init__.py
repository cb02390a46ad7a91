"""torchjax.utils: data loading (torchjax.utils.data), activation checkpointing
(torchjax.utils.checkpoint), hook handles (torchjax.utils.hooks) and graph pictures
(torchjax.utils.viz)."""

from . import checkpoint, data, hooks
from . import viz as viz  # make_dot; imports graphviz only when called

__all__ = ["checkpoint", "data", "hooks"]
