"""torchjax.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp (PyTorch's API).

Each runs JAX's transforms on the pure function of the inputs' arrays (torchjax._functionalize)
instead of building and replaying the tape; inputs and outputs follow PyTorch's conventions
(a Tensor or a tuple of Tensors; results nested and unpacked exactly as PyTorch does).
strict=True asks whether outputs are reachable from inputs on the linearized program
(torchjax._dependence), PyTorch's "does it require grad" question.

create_graph=True (results that carry autograd history for a further backward) instead follows
PyTorch's own algorithm on the tape: func runs on views of the inputs, and the results are
torchjax.autograd.grad(..., create_graph=True) calls (one per output element for jacobian and
hessian, the double-backward trick for jvp and hvp), so they are differentiable with respect
to the inputs, v and anything func captures. See the "create_graph=True" section below.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _functionalize as F
from .._autograd.grad_mode import enable_grad
from .._dependence import dependence
from .._tensor import Tensor
from .._x64 import scope_functions
from ..func._jacobian import _basis

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- PyTorch's argument conventions ----------------------------------------------------------

def _as_tuple(inp, arg_name: str, fn_name: str):
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}." if is_tuple
                     else f"the given {arg_name} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _require_float(inputs) -> None:
    for t in inputs:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _pure(func, fn_name: str, box: F.Box):
    """func as a function of the input arrays returning the list of output arrays."""
    def pure(*arrays):
        with enable_grad():  # as PyTorch: func runs with grad mode on
            out = func(*[F.wrap(a) for a in arrays])
        box.value, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
        return [o._data for o in outs]
    return pure


def _scalar_pure(func, fn_name: str):
    """func for hessian/hvp/vhp: one Tensor with one element -> (0-d array, the output)."""
    def pure(*arrays):
        with enable_grad():
            out = func(*[F.wrap(a) for a in arrays])
        is_tuple, _ = _as_tuple(out, "outputs of the user-provided function", fn_name)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                               "contain a single element")
        return out._data.reshape(()), out._data
    return pure


def _inexact(a) -> bool:
    return jnp.issubdtype(a.dtype, jnp.inexact)


def _cotangent(v, out):
    if _inexact(out):
        return v._data.astype(out.dtype)
    return np.zeros(out.shape, jax.dtypes.float0)


# -- strict mode -----------------------------------------------------------------------------

def _check_outputs_require_grad(deps) -> None:
    for i, row in enumerate(deps):
        if not any(row):
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _check_inputs_reached(deps, n_inputs: int) -> None:
    for j in range(n_inputs):
        if not any(row[j] for row in deps):
            raise RuntimeError("The output of the user-provided function is independent of "
                               f"input {j}. This is not allowed in strict mode.")


def _second_order_deps(scalar, arrays):
    """Strict checks shared by hessian/hvp/vhp; returns deps of the gradient on the inputs."""
    first = dependence(lambda *xs: [scalar(*xs)], arrays)
    _check_outputs_require_grad(first)
    for i, reached in enumerate(first[0]):
        if not reached:
            raise RuntimeError("The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
    gradient = jax.grad(scalar, argnums=tuple(range(len(arrays))))
    deps = dependence(lambda *xs: list(gradient(*xs)), arrays)
    for i, row in enumerate(deps):
        if not any(row):
            raise _constant_jacobian(i)
    return deps


# -- the API ---------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    if create_graph:
        return _vjp_graph(func, inputs, v, strict)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    _require_float(inputs)
    box = F.Box()
    pure = _pure(func, "vjp", box)
    arrays = [t._data for t in inputs]
    outs, pullback = jax.vjp(pure, *arrays)
    is_outputs_tuple = box.value
    deps = dependence(pure, arrays) if strict else None
    if strict:
        _check_outputs_require_grad(deps)
    out_t = tuple(F.wrap(o) for o in outs)
    if v is not None:
        _, v = _as_tuple(v, "v", "vjp")
        _validate_v(v, out_t, is_outputs_tuple)
    else:
        if len(outs) != 1 or outs[0].size != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        v = (F.wrap(jnp.ones(outs[0].shape, outs[0].dtype)),)
    grads = pullback([_cotangent(x, o) for x, o in zip(v, outs)])
    if strict:
        _check_inputs_reached(deps, len(arrays))
    return (_tuple_postprocess(out_t, is_outputs_tuple),
            _tuple_postprocess(tuple(F.wrap(g) for g in grads), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product at inputs."""
    if create_graph:
        return _jvp_graph(func, inputs, v, strict)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    _require_float(inputs)
    if v is not None:
        _, v = _as_tuple(v, "v", "jvp")
        _validate_v(v, inputs, is_inputs_tuple)
    else:
        if len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        v = (F.wrap(jnp.ones(inputs[0].shape, inputs[0]._data.dtype)),)
    box = F.Box()
    pure = _pure(func, "jvp", box)
    arrays = [t._data for t in inputs]
    tangents = [x._data.astype(a.dtype) for x, a in zip(v, arrays)]
    outs, tans = jax.jvp(pure, arrays, tangents)
    is_outputs_tuple = box.value
    if strict:
        deps = dependence(pure, arrays)
        _check_outputs_require_grad(deps)
        _check_inputs_reached(deps, len(arrays))
    tans = [jnp.zeros(o.shape, o.dtype) if t.dtype == jax.dtypes.float0 else t
            for o, t in zip(outs, tans)]
    return (_tuple_postprocess(tuple(F.wrap(o) for o in outs), is_outputs_tuple),
            _tuple_postprocess(tuple(F.wrap(t) for t in tans), is_outputs_tuple))


def _jacobian_blocks(pure, arrays, forward: bool):
    """blocks[i][j] = d output_i / d input_j, shaped output_i.shape + input_j.shape; integer
    outputs (which have no gradient in PyTorch) give zeros. One trace of func either way: a
    vjp pulled back over the output basis, or a jvp pushed forward over the input basis."""
    where = F.Box()

    def split(*xs):
        res = pure(*xs)
        where.value = [(_inexact(o), tuple(o.shape)) for o in res]
        return [o for o in res if _inexact(o)]

    if forward:
        total = sum(a.size for a in arrays)
        basis = _basis(arrays, [a.dtype for a in arrays], total, 0, total)

        def push(*tangents):
            return jax.jvp(split, tuple(arrays), tuple(tangents))[1]
        diff_tans = jax.vmap(push)(*basis)
        diff = []
        for t in diff_tans:  # (total, *out.shape): the input basis runs along dim 0
            moved = jnp.moveaxis(t, 0, -1)
            row, offset = [], 0
            for a in arrays:
                part = moved[..., offset:offset + a.size]
                row.append(part.reshape(moved.shape[:-1] + a.shape))
                offset += a.size
            diff.append(row)
    else:
        diff_outs, pullback = jax.vjp(split, *arrays)
        total = sum(o.size for o in diff_outs)
        diff = []
        if diff_outs:
            basis = _basis(diff_outs, [o.dtype for o in diff_outs], total, 0, total)
            per_in = jax.vmap(lambda *cts: pullback(list(cts)))(*basis)
            offset = 0
            for o in diff_outs:
                diff.append([r[offset:offset + o.size].reshape(o.shape + r.shape[1:])
                             for r in per_in])
                offset += o.size
    rows = iter(diff)
    blocks = []
    for is_diff, shape in where.value:
        if is_diff:
            blocks.append([F.wrap(b) for b in next(rows)])
        else:
            blocks.append([F.wrap(jnp.zeros(shape + a.shape, a.dtype)) for a in arrays])
    if forward:  # PyTorch's forward-mode jacobian nests lists, its reverse mode tuples
        return blocks
    return tuple(tuple(row) for row in blocks)


def _forward_mode_options(create_graph: bool, strict: bool) -> None:
    """PyTorch's errors for options its forward-mode jacobian does not take."""
    if create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.')


def _strict_reached(deps, vectorize: bool) -> None:
    """strict=True: no vectorize, and every output reached from every input."""
    if vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
            "not supported together. Please either set `strict=False` or "
            "`vectorize=False`.")
    for i, row in enumerate(deps):
        for j, reached in enumerate(row):
            if not reached:
                raise RuntimeError(f"Output {i} of the user-provided function is "
                                   f"independent of input {j}. This is not allowed in "
                                   "strict mode.")


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs (nested as PyTorch's: outputs outer, inputs inner)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    forward = strategy == "forward-mode"
    if forward:
        _forward_mode_options(create_graph, strict)
    if create_graph:
        return _jacobian_graph(func, inputs, strict, vectorize)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if forward and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    if not forward:
        _require_float(inputs)
    box = F.Box()
    pure = _pure(func, "jacobian", box)
    arrays = [t._data for t in inputs]
    if strict:
        deps = dependence(pure, arrays)
        _check_outputs_require_grad(deps)
        _strict_reached(deps, vectorize)
    blocks = _jacobian_blocks(pure, arrays, forward)
    return _tuple_postprocess(blocks, (box.value, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar func at inputs (a tuple of tuples for tuple inputs)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        _forward_mode_options(create_graph, strict)
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian isonly implemented for "
                                      "`vectorize=True`.")
    if create_graph:
        return _hessian_graph(func, inputs, is_inputs_tuple, strict, vectorize)
    _require_float(inputs)
    with_out = _scalar_pure(func, "hessian")
    arrays = [t._data for t in inputs]

    def scalar(*xs):
        return with_out(*xs)[0]
    if strict:
        deps = _second_order_deps(scalar, arrays)
        _strict_reached(deps, vectorize)
    argnums = tuple(range(len(arrays)))
    h = jax.hessian(scalar, argnums=argnums)(*arrays)
    if outer_jacobian_strategy == "forward-mode":
        res = [[F.wrap(b) for b in row] for row in h]
    else:
        res = tuple(tuple(F.wrap(b) for b in row) for row in h)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _hessian_product(func, inputs, v, create_graph, strict, fn_name: str):
    if create_graph:
        return _hessian_product_graph(func, inputs, v, strict, fn_name)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    _require_float(inputs)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        _validate_v(v, inputs, is_inputs_tuple)
    else:
        if len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        v = (F.wrap(jnp.ones(inputs[0].shape, inputs[0]._data.dtype)),)
    scalar = _scalar_pure(func, fn_name)
    arrays = [t._data for t in inputs]
    vs = [x._data.astype(a.dtype) for x, a in zip(v, arrays)]
    value_and_grad = jax.value_and_grad(scalar, argnums=tuple(range(len(arrays))),
                                        has_aux=True)

    def gradient(*xs):  # the output keeps its own shape as aux (PyTorch returns it as is)
        (_, out), grads = value_and_grad(*xs)
        return list(grads), out

    if fn_name == "vhp":
        _, pullback, output = jax.vjp(gradient, *arrays, has_aux=True)
        prod = pullback(vs)
    else:
        _, prod, output = jax.jvp(gradient, arrays, vs, has_aux=True)
    if strict:
        deps = _second_order_deps(lambda *xs: scalar(*xs)[0], arrays)
        for i in range(len(arrays)):
            if fn_name == "vhp" and not any(row[i] for row in deps):
                raise RuntimeError("The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode.")
    return (F.wrap(output),
            _tuple_postprocess(tuple(F.wrap(p) for p in prod), is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar func."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v): the Hessian-vector product of a scalar func."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


# -- create_graph=True: PyTorch's algorithm on the tape --------------------------------------
#
# The results must carry autograd history to the inputs, to v and to whatever func captures
# (an nn.Linear's parameters, say), so func runs on the tape as in PyTorch and every result is
# a torchjax.autograd.grad(create_graph=True), whose backward pass is itself recorded.

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


def _independent(i) -> RuntimeError:
    return RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                        "This is not allowed in strict mode.")


def _constant_jacobian(i) -> RuntimeError:
    return RuntimeError(
        "While computing the hessian, found that the jacobian of the user-provided function "
        f"with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example).")


def _constant_grad_input(i) -> RuntimeError:
    return RuntimeError(f"The gradient with respect to input {i} is independent of the inputs "
                        "of the user-provided function. This is not allowed in strict mode.")


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


# every transform traces the user's function in torchjax's x64 scope
scope_functions(globals(), __all__)
