"""Samples for the rows in _ops/inplace_hyperbolic.py (Tensor.asinh_, acosh_, atanh_ and their
arc* aliases): the values in place, PyTorch's error for a result type the input cannot hold,
and the node PyTorch records, whose backward raises NotImplementedError in both."""

from .harness import S, err, own_make

make = own_make(130)

_DOMAIN = {"asinh": {}, "acosh": dict(low=1.1, high=4.0), "atanh": dict(low=-0.9, high=0.9)}


def _node_and_backward(method):
    """The grad_fn name of the in-place result on a non-leaf, and the error backward raises
    (the key phrase of PyTorch's message: "derivative for 'inplace version of ...")."""
    def call(lib, a):
        out = getattr(a.requires_grad_().clone(), method)()
        return out.grad_fn.name(), err(lambda: out.sum().backward(), chars=200)
    return call


def _samples(name):
    kw = _DOMAIN[name]
    return [
        S(make(3, 4, **kw), grad=False, call=lambda lib, a: getattr(a.clone(), name + "_")()),
        S(make(5, **kw), grad=False,
          call=lambda lib, a: getattr(a.clone(), "arc" + name[1:] + "_")(), desc="arc alias"),
        S(make(4, **kw).astype("float64"), grad=False,
          call=lambda lib, a: getattr(lib, name + "_")(a.clone()), desc="torch.<name>_"),
        S(make(3, dtype="int64", low=1, high=3), grad=False,
          call=lambda lib, a: err(lambda: getattr(a.clone(), name + "_")()),
          desc="int in-place cannot hold a float"),
        S(make(4, **kw), grad=False, call=_node_and_backward(name + "_"), desc="backward raises"),
        S(make(4, **kw), grad=False, call=_node_and_backward("arc" + name[1:] + "_"),
          desc="backward raises (alias)"),
    ]


SAMPLES = {f"_{name}_inplace": _samples(name) for name in _DOMAIN}
