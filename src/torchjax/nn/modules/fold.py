"""torch.nn.modules.fold's names; the classes live in conv.py."""

from .conv import Fold, Unfold

__all__ = ["Fold", "Unfold"]
