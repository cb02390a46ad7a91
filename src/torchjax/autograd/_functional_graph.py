"""torchjax.autograd.functional with create_graph=True: PyTorch's algorithm on the tape.

The results must carry autograd history to the inputs, to v and to whatever func captures
(an nn.Linear's parameters, say), so func runs on the tape as in PyTorch and every result is
a torchjax.autograd.grad(create_graph=True), whose backward pass is itself recorded."""

from __future__ import annotations

from .._autograd.grad_mode import enable_grad
from .._tensor import Tensor
from ._functional_checks import (
    _as_tuple,
    _check_outputs_require_grad,
    _constant_grad_input,
    _constant_jacobian,
    _independent,
    _tuple_postprocess,
    _validate_v,
)


def _preprocess(tensors, need_graph: bool):
    """New Tensor objects standing for the inputs (or v): a view keeps the graph of one that
    requires grad, any other becomes a fresh leaf (requiring grad when need_graph). Always new
    objects, so that func's arguments differ from the same Tensors captured by func."""
    return tuple(t.view_as(t) if t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in tensors)


def _grad(outputs, inputs, grad_outputs=None):
    """autograd.grad(create_graph=True) of the outputs that require grad: None for an input
    none of them reaches (all None when no output requires grad)."""
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept),
                create_graph=True, allow_unused=True)


def _v_or_ones(v, inputs, is_inputs_tuple: bool, fn_name: str):
    """v (one per input) kept on its own graph, or None for the implicit one of a single
    one-element input."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _preprocess(v, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
        return v
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return None


# Whether a result requires grad decides PyTorch's strict checks under create_graph; the
# recorded backward keeps only the edges its linearized program depends on (_jax_node.record),
# so requires_grad answers as PyTorch's does.


def _check_outputs_graph(outputs) -> None:
    _check_outputs_require_grad([[o.requires_grad] for o in outputs])


def _check_grads_graph(grads, constant) -> None:
    """Strict checks on an intermediate gradient: None (input never reached) or constant."""
    for i, g in enumerate(grads):
        if g is None:
            raise _independent(i)
        if not g.requires_grad:
            raise constant(i)


_UNREACHED = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, stage: str):
    """Zeros for unreached inputs; in strict mode an error for them and for constant results."""
    from .._creation import zeros_like
    res = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_UNREACHED[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _vjp_graph(func, inputs, v, strict):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs),
                                              "outputs of the user-provided function", "vjp")
        if strict:
            _check_outputs_graph(outputs)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _preprocess(v, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        res = _fill_in_zeros(_grad(outputs, inputs, v), inputs, strict, "back")
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def _jvp_graph(func, inputs, v, strict):
    from .._creation import zeros_like
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _preprocess(inputs, need_graph=True)
        v = _v_or_ones(v, inputs, is_inputs_tuple, "jvp")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs),
                                              "outputs of the user-provided function", "jvp")
        if strict:
            _check_outputs_graph(outputs)
        # the double backward trick: the vjp is linear in grad_outputs, so differentiating it
        # with respect to them along v gives J v. Their value never enters that result.
        grad_outputs = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs)
        if strict:
            _check_grads_graph(grad_inputs, _constant_grad_input)
        res = _fill_in_zeros(_grad(grad_inputs, grad_outputs, v), outputs, strict, "back_trick")
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_outputs_tuple))


def _jacobian_graph(func, inputs, strict, vectorize):
    """One grad per output element (vectorize=True, which PyTorch batches with vmap, gives the
    same result from the same loop)."""
    from .. import stack
    from .._creation import zeros_like
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", "jacobian")
        if strict:
            _check_outputs_graph(outputs)
            if vectorize:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                for k, (g, inp) in enumerate(zip(_grad((flat[j],), inputs), inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not "
                                               "allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and not g.requires_grad:
                        # PyTorch's message names the output's index i here
                        raise RuntimeError("The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[k].append(g)
            jac.append(tuple(stack(r, 0).view(out.size() + inp.size())
                             for r, inp in zip(rows, inputs)))
    return _tuple_postprocess(tuple(jac), (is_outputs_tuple, is_inputs_tuple))


def _hessian_graph(func, inputs, is_inputs_tuple, strict, vectorize):
    """The jacobian (create_graph=True) of the jacobian (always create_graph=True)."""
    def single_output(*inp):
        out = func(*inp)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if strict:
            _check_outputs_graph(outs)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = _jacobian_graph(single_output, inp, False, False)
        if strict:
            for i, g in enumerate(jac):
                if not g.requires_grad:
                    raise _constant_jacobian(i)
        return jac

    res = _jacobian_graph(jac_func, inputs, strict, vectorize)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _hessian_product_graph(func, inputs, v, strict, fn_name: str):
    from .._creation import zeros_like
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _preprocess(inputs, need_graph=True)
        v = _v_or_ones(v, inputs, is_inputs_tuple, fn_name)
        is_outputs_tuple, outputs = _as_tuple(
            func(*inputs), "outputs of the user-provided function", fn_name)
        if strict:
            _check_outputs_graph(outputs)
        if is_outputs_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outputs[0].nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                               "contain a single element")
        jac = _grad(outputs, inputs)
        if strict:
            _check_grads_graph(jac, _constant_jacobian)
        if fn_name == "vhp":
            res = _fill_in_zeros(_grad(jac, inputs, v), inputs, strict, "double_back")
        else:  # H v by the double backward trick, as jvp does
            grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
            double_back = _grad(jac, inputs, grad_jac)
            res = _fill_in_zeros(_grad(double_back, grad_jac, v), inputs, strict,
                                 "double_back_trick")
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))

