"""torchjax.utils: data loading (torchjax.utils.data) and graph pictures (torchjax.utils.viz)."""

from . import data
from . import viz as viz  # make_dot; imports graphviz only when called

__all__ = ["data"]
