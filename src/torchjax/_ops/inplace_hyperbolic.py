"""Op-table rows: the in-place inverse hyperbolic functions asinh_, acosh_ and atanh_ (and
their arc* aliases).

PyTorch records each as a node of its own (AsinhBackward1, AcoshBackward1, AtanhBackward1)
whose backward it has not implemented: a backward that reaches one raises NotImplementedError
("the derivative for 'inplace version of asinh' is not implemented."). These rows compute
the same values as pointwise.py's out-of-place rows and raise that error when backward
reaches them; the Tensor methods below replace the in-place forms pointwise.py's rows would
give.
"""

from __future__ import annotations

import jax.numpy as jnp

from ._nograd import no_derivative
from ._registry import function, op


def _in_place_row(name: str, f):
    row = f"_{name}_inplace"
    raising = no_derivative(f"the derivative for 'inplace version of {name}' is not implemented.",
                            NotImplementedError)

    def fn(input):
        return raising(f(input), input)

    fn.__name__ = row
    fn.__doc__ = f"{name}(input) for Tensor.{name}_: PyTorch has no derivative for it."
    op(name=row, promote="float", function=False, method=False,
       grad=f"{name.capitalize()}Backward1")(fn)

    def in_place(self):
        from .._dispatch import call_op_inplace
        return call_op_inplace(row, self)

    in_place.__name__ = in_place.__qualname__ = name + "_"
    in_place.__doc__ = (f"In place: {name}(self). As in PyTorch, backward through the result "
                        "raises NotImplementedError.")
    function(name=name + "_", function=False, aliases=("arc" + name[1:] + "_",))(in_place)


_in_place_row("asinh", jnp.arcsinh)
_in_place_row("acosh", jnp.arccosh)
_in_place_row("atanh", jnp.arctanh)
