"""Shape rows: view, reshape, flatten, squeeze, permute, transpose, expand, cat, stack, split.

Most of these are views in PyTorch (view=True): a write through the result reaches the input.
Their gradients do not depend on input values, hence needs=().
"""

from __future__ import annotations

import inspect
import math

import jax.numpy as jnp
from jax import lax

from .. import _dtypes
from ._registry import function, op


def _star(name):
    """Show parameter `name` as *name (x.view(2, 3)) while the row receives it as one tuple.

    The dispatcher calls rows with keyword arguments only, which a real *args cannot take.
    """

    def deco(fn):
        sig = inspect.signature(fn)
        params = [p.replace(kind=p.VAR_POSITIONAL) if p.name == name else p
                  for p in sig.parameters.values()]
        fn.__signature__ = sig.replace(parameters=params)
        return fn

    return deco


def _shape_arg(shape):
    """view(2, 3), view((2, 3)), view([2, 3]) and view(torch.Size([2, 3])) all mean (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(int(d) for d in shape)


def _dim(dim, ndim, extra=0):
    """PyTorch's dim wrapping; `extra` widens the range for ops that add a dim (unsqueeze)."""
    n = max(ndim + extra, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _infer(shape, size):
    """The shape with its -1 filled in, or PyTorch's error for a shape that cannot hold size."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for d in shape:
        if d < -1:
            raise RuntimeError(f"invalid shape dimension {d}")
    known = math.prod(d for d in shape if d != -1)
    if -1 in shape:
        if known == 0:
            if size == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous")
        elif size % known == 0:
            return tuple(size // known if d == -1 else d for d in shape)
    elif known == size:
        return shape
    raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {size}")


def _reshape(input, shape):
    if len(shape) == 1 and isinstance(shape[0], _dtypes.dtype):
        raise NotImplementedError("view(dtype) (reinterpreting the bytes) is not supported; use "
                                  ".to(dtype) for a converted copy")
    return jnp.reshape(input, _infer(_shape_arg(shape), input.size))


@op(promote="none", needs=(), view=True, function=False)
@_star("shape")
def view(input, shape):
    """The same values with a new shape (a view: writes reach the original)."""
    return _reshape(input, shape)


@op(promote="none", needs=(), view=True, grad="ViewBackward0")
@_star("shape")
def reshape(input, shape):
    """The same values with a new shape (always a view here; PyTorch copies non-contiguous)."""
    return _reshape(input, shape)


@op(promote="none", needs=(), view=True, grad="ViewBackward0")
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one."""
    start, end = _dim(start_dim, input.ndim), _dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 0:
        return input.reshape(1)
    s = input.shape
    return input.reshape(s[:start] + (math.prod(s[start:end + 1]),) + s[end + 1:])


@function()
def ravel(input):
    """input flattened to 1-D."""
    return input.reshape(-1)


@function()
def reshape_as(input, other):
    """input reshaped to other's shape."""
    return input.reshape(other.shape)


@op(promote="none", needs=(), view=True, grad="ViewBackward0")
def unflatten(input, dim, sizes):
    """Split dim into the given sizes (one of them may be -1)."""
    d = _dim(dim, input.ndim)
    sizes = tuple(int(n) for n in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    try:
        new = _infer(sizes, n)
    except RuntimeError as e:
        if "only one dimension" in str(e):
            raise
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the "
                           f"size of dim {d} ({n}) in the input tensor") from None
    return input.reshape(input.shape[:d] + new + input.shape[d + 1:])


# squeeze is three rows because PyTorch names its grad_fn after the form:
# squeeze() SqueezeBackward0, squeeze(int) SqueezeBackward1, squeeze(tuple) SqueezeBackward2.
def _squeeze(input, dims):
    drop = tuple(d for d in dims if input.shape[d] == 1)
    return jnp.squeeze(input, drop) if drop else input


@op(name="squeeze", promote="none", needs=(), view=True, function=False, method=False)
def _squeeze_all(input):
    """Drop every dim of size 1."""
    return _squeeze(input, range(input.ndim))


@op(promote="none", needs=(), view=True, function=False, method=False,
    grad="SqueezeBackward1")
def _squeeze_dim(input, dim):
    """Drop dim if its size is 1."""
    d = _dim(dim, input.ndim)
    return _squeeze(input, (d,) if input.ndim else ())


@op(promote="none", needs=(), view=True, function=False, method=False,
    grad="SqueezeBackward2")
def _squeeze_dims(input, dim):
    """Drop the dims in dim whose size is 1."""
    dims = [_dim(d, input.ndim) for d in dim]
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return _squeeze(input, dims if input.ndim else ())


def _run(row, dyn, stat):
    from .._dispatch import PREPARED, dispatch
    return dispatch(PREPARED[row], dyn, stat)


@function()
def squeeze(input, dim=None):
    """Drop dims of size 1 (all of them, or those in dim; other dims are left alone)."""
    if dim is None:
        return _run("squeeze", (input,), ())
    if isinstance(dim, (tuple, list)):
        return _run("_squeeze_dims", (input,), (tuple(dim),))
    return _run("_squeeze_dim", (input,), (dim,))


@op(promote="none", needs=(), view=True)
def unsqueeze(input, dim):
    """Insert a dim of size 1 at dim."""
    return jnp.expand_dims(input, _dim(dim, input.ndim, extra=1))


@op(promote="none", needs=(), view=True)
@_star("dims")
def permute(input, dims):
    """Reorder the dims: x.permute(2, 0, 1) or torch.permute(x, (2, 0, 1))."""
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(
            "permute(): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
            f"len(dims) = {len(dims)}")
    dims = tuple(_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return jnp.transpose(input, dims)


@op(promote="none", needs=(), view=True, aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    if input.ndim == 0:
        for d in (dim0, dim1):
            _dim(d, 0)
        return input
    return jnp.swapaxes(input, _dim(dim0, input.ndim), _dim(dim1, input.ndim))


def _type_name(x):
    from .._tensor import _TENSOR_TYPE_NAMES
    return "torch." + _TENSOR_TYPE_NAMES.get(_dtypes.from_jax(x.dtype).name, "Tensor")


@op(promote="none", needs=(), view=True, function=False)
@_star("size")
def expand(input, size):
    """Broadcast to a larger size without copying (-1 keeps a dim's size). Method only."""
    size = _shape_arg(size)
    n, lead = input.ndim, len(size) - input.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand({_type_name(input)}{{{_fmt(input.shape)}}}, size={_fmt(size)}): the number "
            f"of sizes provided ({len(size)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({n})")
    out = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out.append(s)
            continue
        have = input.shape[i - lead]
        if s == -1:
            s = have
        elif have != 1 and have != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {_fmt(size)}.  Tensor sizes: "
                f"{_fmt(input.shape)}")
        out.append(s)
    return jnp.broadcast_to(input, tuple(out))


@function(name="expand_as", function=False)
def _expand_as(self, other):
    """self expanded to other's size (a view)."""
    return self.expand(tuple(other.shape))


@op(promote="none", needs=(), function=False)
@_star("repeats")
def repeat(input, repeats):
    """Tile the tensor repeats[i] times along dim i (new leading dims as needed). Method only."""
    repeats = _shape_arg(repeats)
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(repeats)}: {_fmt(repeats)}")
    return jnp.tile(input, repeats)


# -- joining ---------------------------------------------------------------------------------

@op(tensors=(), tensor_list="tensors", needs=(), aliases=("concat", "concatenate"))
def cat(tensors, dim=0):
    """Join tensors along an existing dim (dtypes are promoted across the list)."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # PyTorch skips 1-D empty tensors whatever the other shapes (a legacy rule)
    keep = [(i, t) for i, t in enumerate(tensors) if not (t.ndim == 1 and t.shape[0] == 0)]
    if not keep:
        return jnp.concatenate(tensors)
    i0, ref = keep[0]
    d = _dim(dim, ref.ndim)
    for i, t in keep[1:]:
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                               f"{t.ndim}")
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    return jnp.concatenate([t for _, t in keep], axis=d)


@op(tensors=(), tensor_list="tensors", needs=())
def stack(tensors, dim=0):
    """Join equally sized tensors along a new dim."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != ref.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_fmt(ref.shape)} at entry 0 and {_fmt(t.shape)} at entry {i}")
    return jnp.stack(tensors, axis=_dim(dim, ref.ndim, extra=1))


# -- splitting (each piece is a view of the input) -------------------------------------------

def _pieces(input, d, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(lax.slice_in_dim(input, start, start + n, axis=d))
        start += n
    return tuple(out)


@op(name="split", tensors=("tensor",), promote="none", needs=(), view=True, function=False,
    method=False)
def _split_size(tensor, split_size, dim=0):
    """Split into pieces of split_size (the last may be smaller)."""
    d = _dim(dim, tensor.ndim)
    n, s = tensor.shape[d], split_size
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    if s == 0:
        if n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        return (tensor,)
    return _pieces(tensor, d, [s] * (n // s) + ([n % s] if n % s or n == 0 else []))


@op(promote="none", needs=(), view=True, function=False, method=False)
def split_with_sizes(input, split_sizes, dim=0):
    """Split into pieces of the listed sizes."""
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    sizes = [int(k) for k in split_sizes]
    if any(k < 0 for k in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={_fmt(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
            f"at dimension {d}), but got split_sizes={_fmt(sizes)}")
    return _pieces(input, d, sizes)


@function()
def split(tensor, split_size_or_sections, dim=0):
    """Split into pieces of split_size (the last may be smaller) or of the listed sizes."""
    s = split_size_or_sections
    if isinstance(s, (tuple, list)):
        return _run("split_with_sizes", (tensor,), (tuple(s), dim))
    return _run("split", (tensor,), (s, dim))


@op(promote="none", needs=(), view=True, grad="SplitBackward0")
def chunk(input, chunks, dim=0):
    """Split into at most `chunks` pieces of equal size (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        return _pieces(input, d, [0] * chunks)
    step = -(-n // chunks)
    return _pieces(input, d, [min(step, n - k) for k in range(0, n, step)])


@op(promote="none", needs=(), view=True)
def unbind(input, dim=0):
    """The slices along dim, as a tuple."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _dim(dim, input.ndim)
    return tuple(lax.index_in_dim(input, i, d, keepdims=False) for i in range(input.shape[d]))


@op(promote="none", needs=(), view=True, grad="SliceBackward0")
def narrow(input, dim, start, length):
    """The slice start:start+length of dim (a view)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    start = start % n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return lax.slice_in_dim(input, start, start + length, axis=d)


@op(promote="none", needs=(), view=True)
def select(input, dim, index):
    """The slice at index along dim, with that dim removed (a view)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_fmt(input.shape)} at dimension {d}")
    return lax.index_in_dim(input, index % n, d, keepdims=False)


@op(promote="none", needs=(), view=True, aliases=("moveaxis",), grad="PermuteBackward0")
def movedim(input, source, destination):
    """Move dims from source to destination positions; the others keep their order."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({_fmt(src)} dims) should "
            f"contain the same number of dims as destination ({_fmt(dst)} dims)")
    for name, ds in (("source", src), ("destination", dst)):
        if len({_dim(d, input.ndim) for d in ds}) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({_fmt(ds)})")
    src = tuple(_dim(d, input.ndim) for d in src)
    dst = tuple(_dim(d, input.ndim) for d in dst)
    return jnp.moveaxis(input, src, dst) if input.ndim else input


# -- in-place view ops: self takes the view's shape (t_, transpose_, squeeze_, unsqueeze_) -----

def _inplace_view(name: str, grad: str):
    def method(self, *args, **kwargs):
        from .._autograd import grad_mode
        from .._autograd.node import node_class
        if self._base is not None or any(r() is not None for r in self._views or ()):
            # the other views' index maps are defined on self's current layout
            raise NotImplementedError(f"{name}_() on a view or on a tensor that has views is "
                                      f"not supported; use x = x.{name}(...) instead")
        if grad_mode.STATE.grad_enabled and self._requires_grad and self._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        out = getattr(self, name)(*args, **kwargs)
        self._views = None
        self._data = out._data
        if out._grad_fn is not None:
            # PyTorch's node of the in-place overload
            out._grad_fn.__class__ = node_class(grad if isinstance(grad, str)
                                                else grad(*args, **kwargs))
            self._grad_fn, self._output_nr = out._grad_fn, out._output_nr
        self._counter()[0] += 1
        return self

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place {name}: this tensor takes the new shape."
    function(name=name + "_", function=False)(method)


for _n, _g in (("t", "TBackward1"), ("transpose", "TransposeBackward1"),
               ("swapaxes", "TransposeBackward1"), ("swapdims", "TransposeBackward1"),
               ("squeeze", lambda dim=None: "SqueezeBackward3" if dim is None else
                "SqueezeBackward4" if isinstance(dim, int) else "SqueezeBackward5"),
               ("unsqueeze", "UnsqueezeBackward1")):
    _inplace_view(_n, _g)
