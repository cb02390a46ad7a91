"""Module backward hooks, as PyTorch runs them.

A module call with full backward (pre-)hooks passes its tensor inputs, and then its tensor
outputs, through an identity autograd Function (PyTorch's grad_fn name:
BackwardHookFunctionBackward). In backward, the outputs' identity node sees grad_output first:
it runs the pre-hooks (which may replace grad_output) and keeps the result; the inputs' identity
node then sees grad_input and runs the full hooks with both (which may replace grad_input). What
a hook returns is what the identity node passes on, so a replacement changes the gradients that
reach the rest of the graph.

The legacy (non-full) hooks are node hooks on the grad_fn of the module's first output tensor,
with the deprecation warnings PyTorch gives when that node does not describe the whole module.
"""

from __future__ import annotations

import warnings
import weakref

from ..._autograd.grad_mode import is_grad_enabled
from ..._stacklevel import user_stacklevel
from ..._tensor import Tensor
from ...autograd.function import Function

_HOOK_DOCS = ("https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
              "#torch.nn.Module.register_full_backward_hook")

_VIEW_INPLACE = (
    "Output {} of BackwardHookFunction is a view and {}. This view was created inside a custom "
    "Function (or because an input was returned as-is) and the autograd logic to handle "
    "view+inplace would override the custom backward associated with the custom Function, "
    "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning "
    "the output of the custom Function.")


class BackwardHookFunction(Function):
    """Identity on a module's tensors whose backward hands the incoming gradients to a
    callback and passes on what the callback returns."""

    @staticmethod
    def forward(ctx, on_grads, materialize, *tensors):
        ctx.on_grads = on_grads
        # the inputs' node sees zeros for inputs no gradient reached (PyTorch materializes
        # them); the outputs' node sees None for outputs that got no gradient
        ctx.set_materialize_grads(materialize)
        outs = []
        for t in tensors:
            out = Tensor._wrap(t._data)
            # PyTorch returns views: an in-place write to either side shows in the other's
            # version counter, so saved-tensor checks and the in-place error below still fire
            out._vc = t._counter()
            if not t.requires_grad:
                ctx.mark_non_differentiable(out)
            outs.append(out)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, *ctx.on_grads(grads))


def _pack_with_none(indices, values, size) -> tuple:
    """A tuple of `size` entries: values at the tensors' positions, None elsewhere."""
    res = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


class BackwardHook:
    """The hooks of one module call: wraps its inputs and outputs, then runs the user's
    backward pre-hooks and full backward hooks when their gradients arrive."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = -1
        self.n_outputs = -1
        self.input_tensors_index = None
        self.output_tensors_index = None
        self._wrapped_inputs = ()
        self._wrapped_outputs = ()

    # -- forward ---------------------------------------------------------------------------

    def _apply_on_tensors(self, on_grads, materialize: bool, args: tuple):
        """(args with each tensor replaced by its identity-node twin, the tensors' positions,
        (position among the tensors, twin, its version, its grad_fn) of each twin that needs
        a gradient); args unchanged and None when no gradient will flow through them."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None, ()
        twins = BackwardHookFunction.apply(on_grads, materialize, *tensors)
        # a tensor that needs no gradient stays itself: PyTorch hands out a view, so in-place
        # writes to it reach the caller's tensor either way
        twins = tuple(w if t.requires_grad else t for t, w in zip(tensors, twins))
        out = list(args)
        for i, w in zip(index, twins):
            out[i] = w
        watched = tuple((k, w, w._version, w.grad_fn) for k, (t, w) in
                        enumerate(zip(tensors, twins)) if t.requires_grad)
        return (tuple(out) if type(args) is tuple else type(args)(*out)), index, watched

    def setup_input_hook(self, args: tuple) -> tuple:
        res, index, self._wrapped_inputs = self._apply_on_tensors(self._on_input_grads, True,
                                                                  args)
        self.n_inputs = len(args)
        self.input_tensors_index = index
        return res

    def check_inputs_unchanged(self) -> None:
        """PyTorch forbids in-place writes to the inputs' views inside forward; here the write
        is noticed when forward returns (with the message PyTorch gives at the write)."""
        for k, t, version, node in self._wrapped_inputs:
            if t._version != version:
                what = ("is being modified inplace" if t.grad_fn is not node else
                        "its base or another view of its base has been modified inplace")
                raise RuntimeError(_VIEW_INPLACE.format(k, what))
        # the twins hold their grad_fn, whose ctx holds this object: break the cycle
        self._wrapped_inputs = ()

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, index, watched = self._apply_on_tensors(self._on_output_grads, False, args)
        self.n_outputs = len(args)
        self.output_tensors_index = index
        # weak: the caller owns the outputs (a dead one cannot have been written to), and the
        # identity node's ctx holds this object
        self._wrapped_outputs = tuple((k, weakref.ref(t), v, weakref.ref(n))
                                      for k, t, v, n in watched)
        return res if is_tuple else res[0]

    # -- backward --------------------------------------------------------------------------

    def _check_outputs_unchanged(self) -> None:
        """An output written in place with grad on (its grad_fn moved on from the identity
        node) is an error in PyTorch at the write; here it is noticed when backward reaches
        the module."""
        for k, ref, version, node in self._wrapped_outputs:
            t = ref()
            if t is not None and t._version != version and t.grad_fn is not node():
                raise RuntimeError(_VIEW_INPLACE.format(k, "is being modified inplace"))

    def _on_output_grads(self, grads: tuple) -> tuple:
        self._check_outputs_unchanged()
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grads, self.n_outputs)
        if self.user_pre_hooks:
            expected = len(self.grad_outputs)
            for hook in self.user_pre_hooks:
                res = hook(self.module, self.grad_outputs)
                if res is None:
                    continue
                if len(res) != expected:
                    raise RuntimeError("Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(res)}, but expected {expected}")
                self.grad_outputs = res
        grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            # no input needs a gradient, so the inputs' node will never run: the full hooks
            # fire here, with no grad_input to change
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients. See "
                          f"{_HOOK_DOCS} for more details.", stacklevel=user_stacklevel())
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_tensors_index)

    def _on_input_grads(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the outputs (e.g. a
            # second backward through part of the graph): nothing to report
            return grads
        res = _pack_with_none(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)


# -- legacy (non-full) hooks ---------------------------------------------------------------------

class NodeHook:
    """A module's legacy backward hook as a hook on its output's grad_fn: called with
    (grad_input, grad_output) tuples of Tensors, returning None or a new grad_input.

    The engine may hand node hooks raw arrays; they are wrapped for the user's hook and what
    it returns is given back in the same form."""

    def __init__(self, hook) -> None:
        self.hook = hook

    def __call__(self, grad_inputs, grad_outputs):
        raw = any(g is not None and not isinstance(g, Tensor)
                  for g in (*grad_inputs, *grad_outputs))
        res = self.hook(tuple(_as_tensor(g) for g in grad_inputs),
                        tuple(_as_tensor(g) for g in grad_outputs))
        if res is None or not raw:
            return res
        return tuple(None if r is None else r._data for r in res)


def _as_tensor(g):
    return g if g is None or isinstance(g, Tensor) else Tensor._wrap(g)


def maybe_warn_non_full_backward_hook(inputs, result, grad_fn) -> None:
    """PyTorch's FutureWarnings for a legacy hook that will miss part of the gradients."""
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warnings.warn(
                "Using non-full backward hooks on a Module that does not return a single Tensor "
                "or a tuple of Tensors is deprecated and will be removed in future versions. "
                "This hook will be missing some of the grad_output. Please use "
                "register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=3)
            return
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warnings.warn(
                "Using non-full backward hooks on a Module that does not take as input a single "
                "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                "versions. This hook will be missing some of the grad_input. Please use "
                "register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=3)
            return
    else:
        inputs = (inputs,)
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn(
            "Using a non-full backward hook when outputs are nested in python data structure is "
            "deprecated and will be removed in future versions. This hook will be missing some "
            "grad_output.", FutureWarning, stacklevel=3)
    elif len(out_grad_fn) > 1:
        warnings.warn(
            "Using a non-full backward hook when outputs are generated by different autograd "
            "Nodes is deprecated and will be removed in future versions. This hook will be "
            "missing some grad_output. Please use register_full_backward_hook to get the "
            "documented behavior.", FutureWarning, stacklevel=3)
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warnings.warn(
                "Using a non-full backward hook when the forward contains multiple autograd "
                "Nodes is deprecated and will be removed in future versions. This hook will be "
                "missing some grad_input. Please use register_full_backward_hook to get the "
                "documented behavior.", FutureWarning, stacklevel=3)
