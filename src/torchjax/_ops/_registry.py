"""The op table: every op is one row, a pure JAX function with PyTorch's signature plus flags.

A row is declared with the `op` decorator next to its function:

    @op(tensors=("input", "other"), method=True, inplace=True,
        dunders=("__mul__",), rdunders=("__rmul__",), grad="MulBackward0")
    def mul(input, other):
        return input * other

The dispatcher turns each row into torchjax.<name>, Tensor.<name>, Tensor.<name>_ and the
operator dunders; the table-driven tests (tests/ops/) read the same rows and fail for a row
that has no samples there.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

from .._x64 import scoped

OPS: dict[str, OpDef] = {}


@dataclass(eq=False)
class OpDef:
    name: str
    fn: Callable
    # Parameters that take a Tensor (or a Python number, or None). Everything else is static:
    # part of the compiled function's cache key.
    tensors: tuple[str, ...] = ("input",)
    # Name of a parameter that takes a sequence of Tensors (cat, stack), or None.
    tensor_list: str | None = None
    # Type promotion before fn sees the arrays: "all" casts every tensor argument to PyTorch's
    # result dtype; "float" also turns integer results into the default float dtype; "none"
    # passes arrays unchanged (fn handles dtypes itself).
    # A callable promote(cd, static_kwargs) -> dtype may adjust the result (div: floats unless
    # rounding_mode is set).
    promote: str | Callable = "all"
    # The tensor parameters that take part in promotion and casting (where: not `condition`).
    # None: all of them.
    promote_args: tuple[str, ...] | None = None
    function: bool = True          # torchjax.<name>
    method: bool = True            # Tensor.<name>
    inplace: bool = False          # Tensor.<name>_
    dunders: tuple[str, ...] = ()  # Tensor.__op__(self, other) -> name(self, other)
    rdunders: tuple[str, ...] = ()  # Tensor.__rop__(self, other) -> name(other, self)
    aliases: tuple[str, ...] = ()
    differentiable: bool = True
    # grad_fn class name; default <Name>Backward0. PyTorch numbers the nodes of an op's
    # overloads (PowBackward0 for tensor ** scalar, PowBackward1 for tensor ** tensor): then a
    # callable grad(**arguments as given) -> name, asked only when a node is recorded.
    grad: str | Callable | None = None
    # PyTorch numbers an op's in-place overloads after its out-of-place ones (fill_ with a
    # scalar is FillBackward2, fill with one FillBackward0): the offset for Tensor.<name>_.
    inplace_overloads: int = 0
    # Tensor arguments whose values the backward needs (it recomputes the forward inside the
    # backward program, so XLA keeps only what the gradient uses). None: all of them.
    needs: tuple[str, ...] | None = None
    # Tensors PyTorch saves for backward (names of arguments, or "result"): their versions are
    # checked, so an in-place change to them after the op raises PyTorch's error. None: `needs`.
    # A tuple is saved whenever a node is made. A dict maps each differentiable input to what
    # its derivative formula reads (derivatives.yaml), e.g. mul {"input": ("other",), "other":
    # ("input",)}: as in PyTorch, a tensor only one formula reads is saved only when that
    # formula's input requires grad, so `z * 5` saves nothing of z (see _saves.py).
    saves: tuple[str, ...] | dict[str, tuple[str, ...]] | None = None
    # The derivative from the result alone, for one-input rows whose result PyTorch saves
    # (exp, tanh, sigmoid, ...): result_grad(result, ct) -> the input's cotangent. With it the
    # backward reads the kept result instead of re-running the op on the input, which on large
    # tensors is the difference between one memory pass and a transcendental recompute.
    result_grad: Callable | None = None
    # The backward applies JAX's vjp to the intermediate values the recorded forward kept,
    # instead of re-running the forward (for rows whose forward is costly: an RNN's scan);
    # see _residuals.py. Costs memory (the residuals) and a second forward program.
    residuals: bool = False
    view: bool = False             # the output is a view of the first tensor argument
    # The strides PyTorch gives the result when they may not be contiguous (clone keeps a
    # transposed input's): layout(first tensor argument, *statics) -> a _strides record.
    layout: Callable | None = None
    # For a view whose elements are not whole elements of its base (real, imag, view_as_real,
    # view_as_complex: a different dtype), so an index map cannot say where a write lands:
    # view_write(input_values, new_view_values, **statics) -> the input's new values.
    view_write: Callable | None = None
    out_names: tuple[str, ...] | None = None  # multi-output ops returning a named tuple
    # Parameters that are Python numbers which may change from call to call (alpha, lr):
    # passed to the compiled function as values, not compiled in.
    scalars: tuple[str, ...] = ()
    # The op returns a Python sequence of tensors (split, chunk, unbind)
    returns_list: bool = False
    # Called only when the compiled op fails (so it costs nothing on success): explain(**the
    # arguments as given) raises PyTorch's error for the mistake, e.g. mm's
    # "mat1 and mat2 shapes cannot be multiplied (10x3 and 4x8)".
    explain: Callable | None = None
    # Called before every eager call with the arguments as given (Tensors, Python numbers,
    # statics): check(**arguments) raises PyTorch's error for inputs whose *values* PyTorch
    # rejects but XLA would silently compute (an integer division by zero). Costs a device
    # sync when it reads tensor values, so only rows that need it have one.
    check: Callable | None = None
    # For a row with a check: check_passes(**arguments) is True when the check cannot raise
    # for any call with these arguments' kinds (their dtypes, the classes of the numbers):
    # such calls take the fast path and may be deferred (pow of a float tensor: its check
    # is for integers only; a GELU's x ** 3.0 forced the pending sequence at every layer)
    check_passes: Callable | None = None
    # The public namespace of the function form. Rows of torch.linalg, torch.fft and
    # torch.special are named like PyTorch's native functions ("linalg_inv", "fft_rfft",
    # "special_xlogy"): the namespace module publishes them without that prefix
    # (torchjax.linalg.inv); see public_name.
    namespace: str = "torch"
    doc: str | None = None
    signature: inspect.Signature = field(init=False, repr=False)
    statics: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self):
        self.signature = inspect.signature(self.fn)
        params = self.signature.parameters
        for n in (*self.tensors, *self.scalars, *((self.tensor_list,) if self.tensor_list else ())):
            if n not in params:
                raise ValueError(f"op {self.name}: no parameter {n!r}")
        dyn = set(self.tensors) | set(self.scalars) | {self.tensor_list}
        self.statics = tuple(p for p in params if p not in dyn)
        if self.grad is None:
            self.grad = "".join(w.capitalize() for w in self.name.split("_")) + "Backward0"
        if self.doc is None:
            self.doc = (self.fn.__doc__ or "").strip() or None

    @property
    def public_name(self) -> str:
        """The name in its namespace: "linalg_inv" in torch.linalg is "inv"."""
        prefix = self.namespace.rsplit(".", 1)[-1] + "_"
        if self.namespace != "torch" and self.name.startswith(prefix):
            return self.name[len(prefix):]
        return self.name

    @property
    def dynamic(self) -> tuple[str, ...]:
        """Dynamic parameters in signature order: tensors, the tensor list and scalars."""
        dyn = set(self.tensors) | set(self.scalars) | {self.tensor_list}
        return tuple(p for p in self.signature.parameters if p in dyn)


def numbered(stem: str, numbers: dict, *params: str):
    """grad= for an op whose PyTorch node depends on which arguments are Tensors: numbers maps
    one letter per parameter in params, "t" (a Tensor) or "s" (a Python scalar or None), to
    the overload's number, e.g. numbered("Pow", {"ts": 0, "tt": 1, "st": 2}, "input",
    "exponent")."""
    def grad(**arguments):
        kinds = "".join("t" if hasattr(arguments[p], "_data") else "s" for p in params)
        return f"{stem}Backward{numbers[kinds]}"
    return grad


def by_dim(stem: str):
    """grad= for reductions: <stem>Backward0 over all elements, <stem>Backward1 with dim."""
    def grad(dim=None, **_):
        return f"{stem}Backward{0 if dim is None else 1}"
    return grad


def op(**flags):
    """Declare the decorated pure JAX function as a row of the op table."""

    def deco(fn):
        name = flags.pop("name", fn.__name__)
        if name in OPS:
            raise ValueError(f"op {name} defined twice")
        OPS[name] = OpDef(name=name, fn=fn, **flags)
        return fn

    return deco


# Plain Python functions that belong in the public namespaces but are not single ops: they
# route between rows (max(x) / max(x, dim) / max(x, y)) or return Python values (allclose).
FUNCTIONS: dict[tuple, tuple] = {}


def function(name: str | None = None, method: bool = True, function: bool = True,
             aliases: tuple[str, ...] = ()):
    """Register a composite as torchjax.<name> and (when method) Tensor.<name>."""

    def deco(fn):
        # composites compute outside the dispatcher too (index arrays, concrete checks), so
        # they run in torchjax's x64 scope; callers inside torchjax get the same wrapper
        fn = scoped(fn)
        n = name or fn.__name__
        # keyed by the forms too: torch.where(condition, input, other) and
        # Tensor.where(condition, other) are different composites of one name
        FUNCTIONS[(n, method, function)] = (fn, method, function, aliases)
        return fn

    return deco
