"""PyTorch's strided-layout metadata: stride(), storage_offset() and is_contiguous().

torchjax's arrays are XLA's and have no strides of their own; PyTorch programs still read
them (`x.stride()`, `x.is_contiguous()`, `view()` refusing a transposed tensor). So every
tensor carries the strides and storage offset PyTorch would give it, as metadata only.

A tensor made by a computing op is contiguous (its record is None: nothing to store). A view
records its source's layout and the view link (the op and its static arguments) and works
its strides out only when asked, following each view op's rule as PyTorch's
(TensorShape.cpp): the link is cheap to keep, and most views are never asked. Tensors whose
layout is not the default (channels_last, a clone of a transposed tensor, empty_strided)
hold a resolved record (strides, offset).
"""

from __future__ import annotations

import math

import numpy as np

from ._memory_format import channels_last, channels_last_3d, contiguous_format, preserve_format


class Pending:
    """A view's layout before anyone asked: the source's shape and record, and the link."""

    __slots__ = ("shape", "record", "link")

    def __init__(self, shape, record, link):
        self.shape, self.record, self.link = shape, record, link


def contiguous_strides(shape) -> tuple:
    """PyTorch's strides of a contiguous tensor (a size-0 dimension counts as 1)."""
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def positions(shape, strides, offset):
    """The storage position of every element of a strided layout, as an int64 array."""
    pos = np.full(tuple(shape), offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        pos += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - k - 1))
    return pos


def channels_last_strides(shape) -> tuple:
    """NHWC (4-d) or NDHWC (5-d) order: channels vary fastest."""
    n = len(shape)
    order = (1, *range(n - 1, 1, -1), 0)  # fastest first: C, W, H, (D,) N
    strides = [0] * n
    acc = 1
    for d in order:
        strides[d] = acc
        acc *= shape[d]  # no max(., 1): PyTorch's channels_last strides of an empty tensor
    return tuple(strides)


def resolve(shape, record) -> tuple:
    """(strides, offset) of a tensor of `shape` whose layout record is `record`."""
    if record is None:
        return contiguous_strides(shape), 0
    if record.__class__ is not Pending:
        return record
    chain = []
    while record.__class__ is Pending:  # walk back to a resolved source, then forward
        chain.append(record)
        shape_in, record = record.shape, record.record
    layout = (contiguous_strides(shape_in), 0) if record is None else record
    for i, p in enumerate(reversed(chain)):
        out_shape = shape if i == len(chain) - 1 else chain[len(chain) - 2 - i].shape
        layout = apply(p.link, p.shape, layout, out_shape)
    return layout


def shape_of(t) -> tuple:
    """t's shape, without running t's deferred sequence when t is pending (_deferred)."""
    lz = t._lazy
    return (t._data if lz is None else lz[2]).shape


def of(t) -> tuple:
    """t's (strides, offset), resolved and remembered."""
    record = t._layout
    if record is None:
        return contiguous_strides(shape_of(t)), 0
    if record.__class__ is Pending:
        record = t._layout = resolve(shape_of(t), record)
    return record


def after_view(t, src, link) -> None:
    """Record the layout of the view t = link(src). Raises PyTorch's error for a view()
    whose source is not laid out so that a view can exist."""
    op = link[0]
    name = getattr(op, "name", None)
    if name == "view" and src._layout is not None:
        strides, offset = of(src)
        if view_strides(shape_of(src), strides, shape_of(t)) is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    t._layout = Pending(shape_of(src), src._layout, link)  # (a pending src is not run)


def reshape_copies(src, out_shape) -> bool:
    """Whether reshape/flatten of src to out_shape is a copy in PyTorch (no view exists)."""
    if src._layout is None:
        return False
    strides, _ = of(src)
    return view_strides(shape_of(src), strides, out_shape) is None


def is_contiguous(shape, strides, memory_format=None) -> bool:
    """PyTorch's is_contiguous: dimensions of size 1 may have any stride; an empty tensor is
    contiguous, but channels_last only by its strides."""
    if memory_format in (None, contiguous_format):
        if 0 in shape:
            return True
        order = range(len(shape) - 1, -1, -1)
    elif memory_format is channels_last or memory_format is channels_last_3d:
        if len(shape) != (4 if memory_format is channels_last else 5):
            return False
        order = (1, *range(len(shape) - 1, 1, -1), 0)
    else:
        raise RuntimeError(f"is_contiguous: memory format {memory_format} is not supported")
    expect = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expect:
                return False
            expect *= shape[d]
    return True


def _order_cmp(shape, strides, a, b) -> int:
    """1: dim a lies outside dim b in memory, -1: inside, 0: undecided (a zero stride, or equal
    strides and the smaller or equal dim first)."""
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa != sb:
        return -1 if sa < sb else 1
    return 1 if shape[a] > shape[b] else 0


def physical_order(shape, strides) -> list:
    """The dims from outermost to innermost in memory: PyTorch's insertion sort of the dims by
    stride (a zero stride never moving, equal strides putting the smaller dim inside), as
    infer_dense_strides orders them."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))  # innermost first
    for i in range(1, n):
        k = i
        for j in range(i - 1, -1, -1):
            c = _order_cmp(shape, strides, perm[j], perm[k])
            if c > 0:
                perm[j], perm[k] = perm[k], perm[j]
                k = j
            elif c < 0:
                break
    return perm[::-1]


def dim_order(shape, strides, strict: bool) -> tuple[list, bool]:
    """Tensor.dim_order's permutation, and (when strict) whether it is ambiguous: contiguous
    and channels-last tensors take their format's order, others physical_order."""
    n = len(shape)
    if n <= 1:
        return list(range(n)), False
    rows = is_contiguous(shape, strides)
    cl = is_contiguous(shape, strides, channels_last)
    if rows and not cl:
        return list(range(n)), False
    if cl and not rows:
        return [0, *range(2, n), 1], False
    perm = physical_order(shape, strides)
    ambiguous = strict and any(_order_cmp(shape, strides, b, a) != -1
                               for a, b in zip(perm, perm[1:]))
    return perm, ambiguous


def dense_order_strides(shape, strides) -> tuple:
    """Dense strides in the order of the input's (PyTorch's infer_dense_strides), the layout of
    a copy that keeps its input's order."""
    out = [0] * len(shape)
    acc = 1
    for d in reversed(physical_order(shape, strides)):
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def clone_strides(shape, strides) -> tuple:
    """clone(preserve_format): the same strides when the input is dense and non-overlapping,
    else dense_order_strides."""
    if non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return dense_order_strides(shape, strides)


def non_overlapping_and_dense(shape, strides) -> bool:
    if is_contiguous(shape, strides) or (
            len(shape) in (4, 5) and is_contiguous(shape, strides, channels_last if len(shape) == 4
                                                   else channels_last_3d)):
        return True  # PyTorch asks these first (an empty tensor is contiguous)
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    dims = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d]))
    acc = 1
    for d in dims:
        if shape[d] < 2:
            return True
        if strides[d] != acc:
            return False
        acc *= shape[d]
    return True


def for_format(shape, strides, memory_format) -> tuple | None:
    """The record a copy in memory_format has (None: contiguous)."""
    if memory_format in (None, preserve_format):
        s = clone_strides(shape, strides)
    elif memory_format is contiguous_format:
        return None
    elif memory_format is channels_last or memory_format is channels_last_3d:
        want = 4 if memory_format is channels_last else 5
        if len(shape) != want:
            raise RuntimeError(f"required rank {want} tensor to use {memory_format.name} format")
        s = channels_last_strides(shape)
    else:
        raise RuntimeError(f"memory format {memory_format} is not supported here")
    return None if s == contiguous_strides(shape) else (s, 0)


def copy_layout(src, memory_format=None):
    """The record of a copy of src made in memory_format (None: preserve_format, which keeps a
    transposed or channels_last source's order, as clone, to and the *_like factories do)."""
    if src._layout is None and memory_format in (None, preserve_format, contiguous_format):
        return None
    shape = shape_of(src)
    strides = of(src)[0] if src._layout is not None else contiguous_strides(shape)
    return for_format(shape, strides, memory_format)


def preserve_layout(src, *_):
    """to(dtype) and to(device)'s row hook: the copy keeps src's order (preserve_format)."""
    return copy_layout(src)


def new_layout(shape, memory_format):
    """The record of a new tensor (empty, zeros with memory_format=)."""
    if memory_format in (None, contiguous_format, preserve_format):
        return None
    return for_format(tuple(shape), contiguous_strides(shape), memory_format)


# -- the view ops' rules ---------------------------------------------------------------------

def view_strides(old_shape, old_strides, new_shape):
    """The strides of old viewed as new_shape, or None when no view exists (PyTorch's
    computeStride: each run of dims that are contiguous among themselves may be split or
    merged, never two runs into one)."""
    numel = math.prod(old_shape)
    if numel == 0:
        return tuple(old_strides) if tuple(old_shape) == tuple(new_shape) \
            else contiguous_strides(new_shape)
    if not old_shape:
        return (1,) * len(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _wrap(d, n):
    return d + n if d < 0 else d


def _reshape(shape, strides, offset, out_shape, **_):
    s = view_strides(shape, strides, out_shape)
    # no view exists: PyTorch copies, and so does reshape here (see after_view's caller)
    if s is None:
        return contiguous_strides(out_shape), 0
    return s, offset


def _unsqueeze_at(shape, strides, d):
    s = shape[d] * strides[d] if d < len(shape) else 1
    return shape[:d] + (1,) + shape[d:], strides[:d] + (s,) + strides[d:]


def _unsqueeze(shape, strides, offset, out_shape, dim):
    return _unsqueeze_at(tuple(shape), tuple(strides), _wrap(dim, len(shape) + 1))[1], offset


def _squeeze(shape, strides, offset, out_shape, dim=None):
    if dim is None:
        dims = {d for d, n in enumerate(shape) if n == 1}
    else:
        dims = {_wrap(d, len(shape)) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))
                if len(shape)}
        dims = {d for d in dims if shape[d] == 1}
    return tuple(s for d, s in enumerate(strides) if d not in dims), offset


def _permute(shape, strides, offset, out_shape, dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]  # (x.permute((2, 0, 1)), and einops' x.permute([...]), as the op takes)
    return tuple(strides[_wrap(int(d), len(shape))] for d in dims), offset


def _transpose(shape, strides, offset, out_shape, dim0, dim1):
    if not shape:
        return (), offset
    s = list(strides)
    a, b = _wrap(dim0, len(shape)), _wrap(dim1, len(shape))
    s[a], s[b] = s[b], s[a]
    return tuple(s), offset


def _t(shape, strides, offset, out_shape):
    return tuple(reversed(strides)), offset


def _movedim(shape, strides, offset, out_shape, source, destination):
    n = len(shape)
    src = [_wrap(d, n) for d in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [_wrap(d, n) for d in (destination if isinstance(destination, (tuple, list))
                                 else (destination,))]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return tuple(strides[d] for d in order), offset


def _expand(shape, strides, offset, out_shape, size=None):
    n_out, n_in = len(out_shape), len(shape)
    out = [0] * n_out
    for i in range(n_out - 1, -1, -1):
        j = i - (n_out - n_in)
        if j >= 0:
            out[i] = strides[j] if shape[j] == out_shape[i] else 0
        else:
            # a new leading dim: PyTorch gives it size * stride of the next, or 1 at the end
            out[i] = 0 if out_shape[i] != 1 else (
                out_shape[i + 1] * out[i + 1] if i + 1 < n_out else 1)
    return tuple(out), offset


def _narrow(shape, strides, offset, out_shape, dim, start, length):
    d = _wrap(dim, len(shape))
    start = start + shape[d] if start < 0 else start
    return tuple(strides), offset + start * strides[d]


def _select(shape, strides, offset, out_shape, dim, index):
    d = _wrap(dim, len(shape))
    index = index + shape[d] if index < 0 else index
    return tuple(strides[:d]) + tuple(strides[d + 1:]), offset + index * strides[d]


def _diagonal(shape, strides, offset, out_shape, offset_=0, dim1=0, dim2=1):
    n = len(shape)
    a, b = _wrap(dim1, n), _wrap(dim2, n)
    size = out_shape[-1] if out_shape else 0
    if size:
        offset += offset_ * strides[b] if offset_ >= 0 else -offset_ * strides[a]
    rest = tuple(s for d, s in enumerate(strides) if d not in (a, b))
    return rest + (strides[a] + strides[b],), offset


def _unfold(shape, strides, offset, out_shape, dimension, size, step):
    if not shape:
        return (1,), offset
    d = _wrap(dimension, len(shape))
    s = list(strides)
    s[d] = strides[d] * step
    return tuple(s) + (strides[d],), offset


def _unflatten(shape, strides, offset, out_shape, dim, sizes):
    d = _wrap(dim, len(shape))
    k = len(out_shape) - len(shape) + 1
    inner = out_shape[d:d + k]
    sub = [strides[d] * c for c in contiguous_strides(inner)]
    return tuple(strides[:d]) + tuple(sub) + tuple(strides[d + 1:]), offset


def _basic(shape, strides, offset, out_shape, spec):
    """x[ints, (start, stop, step), None, ...]: PyTorch applies the entries one at a time."""
    shape, strides = list(shape), list(strides)
    d = 0
    for e in spec:
        if e is None:
            shape, strides = map(list, _unsqueeze_at(tuple(shape), tuple(strides), d))
            d += 1
        elif isinstance(e, int):
            offset += e * strides[d]
            del shape[d], strides[d]
        else:
            start, stop, step = e
            offset += start * strides[d]
            shape[d] = max(0, -(-(stop - start) // step))
            strides[d] *= step
            d += 1
    return tuple(strides), offset


def _complex_parts(part):
    def rule(shape, strides, offset, out_shape):
        return tuple(2 * s for s in strides), 2 * offset + part
    return rule


def _as_real(shape, strides, offset, out_shape):
    return tuple(2 * s for s in strides) + (1,), 2 * offset


def _as_complex(shape, strides, offset, out_shape):
    return tuple(s // 2 for s in strides[:-1]), offset // 2


def _dtype_view(shape, strides, offset, out_shape, dtype):
    """view(dtype): positions counted in the new element size (the last stride is 1 when the
    sizes differ)."""
    if not shape or out_shape[-1] == shape[-1]:
        return tuple(strides), offset
    if out_shape[-1] > shape[-1]:  # smaller elements, r per old one
        r = out_shape[-1] // shape[-1]
        return tuple(s * r for s in strides[:-1]) + (1,), offset * r
    r = shape[-1] // out_shape[-1]
    return tuple(s // r for s in strides[:-1]) + (1,), offset // r


def _same(shape, strides, offset, out_shape, **_):
    return tuple(strides), offset


def _as_strided(shape, strides, offset, out_shape, size, stride, storage_offset, order):
    return tuple(stride), storage_offset


def _flatten(shape, strides, offset, out_shape, start_dim=0, end_dim=-1):
    return _reshape(shape, strides, offset, out_shape)


def _piece_start(name, stat, i, n):
    """Where output i of a splitting op starts along its dim (of size n)."""
    if name == "split":
        return i * stat[0]
    if name == "split_with_sizes":
        return sum(stat[0][:i])
    if name == "chunk":
        return i * -(-n // stat[0])
    sections = stat[0]  # tensor_split
    if isinstance(sections, int):
        q, r = divmod(n, sections)
        return i * q + min(i, r)
    bounds = [min(max(_wrap(b, n), 0), n) for b in sections]
    return 0 if i == 0 else bounds[i - 1]


RULES = {
    "view": _reshape, "reshape": _reshape, "flatten": _flatten, "unflatten": _unflatten,
    "squeeze": _squeeze, "_squeeze_dim": _squeeze, "_squeeze_dims": _squeeze,
    "unsqueeze": _unsqueeze, "permute": _permute, "transpose": _transpose, "t": _t,
    "movedim": _movedim, "expand": _expand, "narrow": _narrow, "select": _select,
    "diagonal": _diagonal, "linalg_diagonal": _diagonal, "unfold": _unfold,
    "_select": _basic, "_slice": _basic, "_unsqueeze": _basic, "_alias": _same,
    "real": _complex_parts(0), "imag": _complex_parts(1), "view_as_real": _as_real,
    "view_as_complex": _as_complex, "_as_strided": _as_strided, "_slice_inverse": _as_strided,
    "_view_dtype": _dtype_view,
}


def apply(link, shape, layout, out_shape) -> tuple:
    op, stat = link
    strides, offset = layout
    item = getattr(op, "op", None)
    if item is not None:  # output i of split, chunk, unbind, tensor_split
        stat, i = stat
        name = item.name
        kw = dict(zip(item.statics, stat))
        d = _wrap(kw["dim"], len(shape))
        if name == "unbind":
            return _select(shape, strides, offset, out_shape, d, i)
        start = _piece_start(name, stat, i, shape[d])
        return tuple(strides), offset + start * strides[d]
    kw = dict(zip(op.statics, stat))
    kw.pop("shape", None)  # view/reshape's target: out_shape already says it
    if op.name in ("diagonal", "linalg_diagonal"):
        kw["offset_"] = kw.pop("offset")
    return RULES[op.name](tuple(shape), tuple(strides), offset, tuple(out_shape), **kw)
