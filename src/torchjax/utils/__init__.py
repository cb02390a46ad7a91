"""torchjax.utils: data loading (torchjax.utils.data), hook handles (torchjax.utils.hooks) and
graph pictures (torchjax.utils.viz)."""

from . import data, hooks
from . import viz as viz  # make_dot; imports graphviz only when called

__all__ = ["data", "hooks"]
