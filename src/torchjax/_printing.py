"""Tensor printing that reproduces PyTorch 2.13's ``torch/_tensor_str.py`` character for character.

Everything here works on plain numpy arrays so the output can be checked against torch directly.
Floating values are widened to float64 before formatting: torch formats ``Tensor.item()``, which
is also a Python float (a double), and every float16/bfloat16/float32 value is exact in float64.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

__all__ = ["format_tensor", "tensor_repr", "set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTS = _PrintOptions()

# (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """torch.set_printoptions: a profile first, then any explicit option on top of it.

    Like torch, an unknown profile name is ignored and ``sci_mode`` is always overwritten (so
    any call without it returns to automatic scientific notation).
    """
    if profile in _PROFILES:
        (_OPTS.precision, _OPTS.threshold, _OPTS.edgeitems, _OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keyword arguments that set_printoptions accepts."""
    return dataclasses.asdict(_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """torch.printoptions: set options for the duration of a ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses one notation and one column width for every element of a (real) array."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            for v in np.unique(values).tolist():
                self.width = max(self.width, len(str(v)))
            return
        vals = values[np.isfinite(values) & (values != 0)]
        if vals.size == 0:
            return  # only zeros / nan / inf: integer notation, width 1
        mags = np.abs(vals)
        lo, hi = float(mags.min()), float(mags.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if _OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = _OPTS.sci_mode
        p = _OPTS.precision
        if self.sci_mode:
            fmt, extra = f"{{:.{p}e}}", 0
        elif self.int_mode:
            fmt, extra = "{:.0f}", 1  # room for the trailing "." that marks a float
        else:
            fmt, extra = f"{{:.{p}f}}", 0
        for v in np.unique(vals).tolist():
            self.width = max(self.width, len(fmt.format(v)) + extra)

    def format(self, v) -> str:
        if not self.floating:
            s = str(v)
        elif self.sci_mode:
            s = f"{v:.{_OPTS.precision}e}"
        elif self.int_mode:
            s = f"{v:.0f}"
            if not (math.isinf(v) or math.isnan(v)):
                s += "."
        else:
            s = f"{v:.{_OPTS.precision}f}"
        # Values the width scan skipped (0, -0., nan, inf) may be wider: never truncated.
        return s.rjust(self.width)


def _format_value(v, real_fmt: _Formatter, imag_fmt: _Formatter | None) -> str:
    if imag_fmt is None:
        return real_fmt.format(v)
    re = real_fmt.format(v.real)
    im = (imag_fmt.format(v.imag) + "j").lstrip()
    return re + im if im[0] in "+-" else re + "+" + im


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows, which are the ones the formatters look at."""
    e = _OPTS.edgeitems
    if a.ndim == 0:
        return a
    if not e:
        # torch's quirk: 1-d keeps everything (x[-0:] is all of x), n-d keeps nothing
        return a if a.ndim == 1 else a.reshape(-1)[:0]
    for axis in range(a.ndim):
        n = a.shape[axis]
        if n > 2 * e:
            a = np.take(a, list(range(e)) + list(range(n - e, n)), axis=axis)
    return a


def _render(a: np.ndarray, indent: int, summarize: bool, real_fmt, imag_fmt) -> str:
    e = _OPTS.edgeitems
    fmt = lambda v: _format_value(v, real_fmt, imag_fmt)
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        item_len = real_fmt.width + 2  # ", " between elements
        if imag_fmt is not None:
            item_len += imag_fmt.width + 1  # the "j"
        per_line = max(1, math.floor((_OPTS.linewidth - indent) / item_len))
        if summarize and not e:
            items = ["..."]
        elif summarize and a.shape[0] > 2 * e:
            items = ([fmt(v) for v in a[:e].tolist()] + [" ..."]
                     + [fmt(v) for v in a[-e:].tolist()])
        else:
            items = [fmt(v) for v in a.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = ([_render(a[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(e)]
                + ["..."]
                + [_render(a[i], indent + 1, summarize, real_fmt, imag_fmt)
                   for i in range(n - e, n)])
    else:
        rows = [_render(a[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(n)]
    # blank lines between blocks grow with the rank, as in numpy
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _widen(arr: np.ndarray, dtype_name: str) -> tuple[np.ndarray, str]:
    """The array in a dtype whose tolist() gives the Python values torch formats, and its kind."""
    if dtype_name.startswith("complex") or np.iscomplexobj(arr):
        return np.asarray(arr, dtype=np.complex128), "complex"
    if dtype_name == "bool":
        return np.asarray(arr, dtype=np.bool_), "bool"
    if dtype_name.startswith(("float", "bfloat")):
        return np.asarray(arr).astype(np.float64), "float"
    return np.asarray(arr), "int"


def _tensor_body(arr: np.ndarray, kind: str, indent: int) -> str:
    summarize = arr.size > _OPTS.threshold
    shown = _summarized(arr) if summarize else arr
    if kind == "complex":
        real_fmt = _Formatter(shown.real, True)
        imag_fmt = _Formatter(shown.imag, True)
    else:
        real_fmt, imag_fmt = _Formatter(shown, kind == "float"), None
    return _render(arr, indent, summarize, real_fmt, imag_fmt)


def _add_suffixes(body: str, suffixes: list[str], indent: int) -> str:
    parts = [body]
    # torch's arithmetic, which counts 2 more than the last line's length; kept so that the
    # suffixes wrap exactly where torch wraps them
    last_line_len = len(body) - body.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(arr: np.ndarray, dtype_name: str, grad_fn_name: str | None = None,
                  requires_grad: bool = False, *, default_dtype_name: str = "float32",
                  device_str: str | None = None, type_name: str | None = None,
                  is_parameter: bool = False) -> str:
    """The string PyTorch prints for a dense tensor holding ``arr``.

    dtype_name: torch dtype name without "torch." ("float32", "bfloat16", "int64", ...).
    grad_fn_name: printed as ``grad_fn=<name>`` (a non-leaf); otherwise ``requires_grad=True``
    is printed when requires_grad is set.
    default_dtype_name: the current default float dtype, which decides the ``dtype=`` suffix.
    device_str: e.g. "cuda:0"; printed unless None or "cpu".
    type_name: class name of a Tensor subclass, used instead of "tensor" as the prefix.
    is_parameter: prepend ``Parameter containing:`` as nn.Parameter's repr does.
    """
    prefix = f"{type_name}(" if type_name else "tensor("
    indent = len(prefix)
    shape = tuple(int(d) for d in np.shape(arr))
    suffixes = []
    if device_str is not None and device_str != "cpu":
        suffixes.append(f"device='{device_str}'")
    default_complex = "complex128" if default_dtype_name == "float64" else "complex64"
    if np.size(arr) == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        # an empty int64/bool tensor has no elements that would reveal its dtype
        if dtype_name != default_dtype_name:
            suffixes.append(f"dtype=torch.{dtype_name}")
        body = "[]"
    else:
        if not _OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if dtype_name not in (default_dtype_name, default_complex, "int64", "bool"):
            suffixes.append(f"dtype=torch.{dtype_name}")
        values, kind = _widen(arr, dtype_name)
        body = _tensor_body(values, kind, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    out = _add_suffixes(prefix + body, suffixes, indent)
    return "Parameter containing:\n" + out if is_parameter else out


# torchjax.compile sets this while it traces a step: printing a traced tensor there is a graph
# break (the values exist only when the program runs), not the placeholder shown under vmap
ON_TRACED = None


def tensor_repr(t) -> str:
    """repr() of a torchjax Tensor, as torch prints it."""
    from . import _dtypes, _meta

    grad_fn = t._grad_fn
    # torch drops any C++ namespace ("torch::autograd::AddBackward0") from node names
    grad_fn_name = None if grad_fn is None else grad_fn.name().rsplit("::", 1)[-1]
    cls_name = type(t).__name__
    try:
        device_str = str(t.device)
    except Exception:
        device_str = None
    if _meta.is_meta(t._data):  # no values: "..." with the size (and a non-default dtype)
        prefix = "tensor(" if cls_name in ("Tensor", "Parameter") else f"{cls_name}("
        suffixes = [f"device='{device_str}'", f"size={tuple(t._data.shape)}"]
        if t.dtype is not _dtypes.get_default_dtype():
            suffixes.append(f"dtype=torch.{t.dtype.name}")
        if grad_fn_name is not None:
            suffixes.append(f"grad_fn=<{grad_fn_name}>")
        elif t._requires_grad:
            suffixes.append("requires_grad=True")
        return _add_suffixes(prefix + "...", suffixes, len(prefix))
    try:
        arr = np.asarray(t._data)
    except Exception:  # a JAX tracer (inside jit/vmap/grad) has no values to show
        if ON_TRACED is not None:
            ON_TRACED(t)
        return f"{cls_name}(<traced>, shape={tuple(t._data.shape)}, dtype=torch.{t.dtype.name})"
    return format_tensor(
        arr, t.dtype.name, grad_fn_name, bool(t._requires_grad) and grad_fn is None,
        default_dtype_name=_dtypes.get_default_dtype().name, device_str=device_str,
        # nn.Parameter keeps the plain "tensor(" prefix; as in torch, its own __repr__ adds the
        # "Parameter containing:" line (format_tensor's is_parameter), so it is not added here
        type_name=None if cls_name in ("Tensor", "Parameter") else cls_name)
