"""FunctionCtx: what forward/setup_context record for backward.

As in PyTorch, the ctx methods only remember their arguments; Function.apply checks and uses
them once forward has returned (so the checks see the final outputs and versions).
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor


class FunctionCtx:
    """The `ctx` of a custom Function (its grad_fn object is a subclass of this)."""

    def save_for_backward(self, *tensors):
        """Keep tensors (inputs, outputs or intermediates) for backward's ctx.saved_tensors."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Saves tensors for `jvp` (forward-mode AD), to be read back from `ctx.saved_tensors`."""
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Declare inputs that forward modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Declare outputs that get no gradient (backward still receives zeros for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = value

    def mark_shared_storage(self, *pairs):
        """Deprecated and does nothing except warn; tensors sharing storage are tracked
        automatically.
        """
        warnings.warn("`mark_shared_storage` is deprecated. Tensors with shared storages are "
                      "automatically tracked. Note that calls to `set_()` are not tracked",
                      FutureWarning, stacklevel=2)


# PyTorch keeps this alias so that old pickles load
_ContextMethodMixin = FunctionCtx
