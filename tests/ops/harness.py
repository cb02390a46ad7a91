"""The one helper every op test uses: run the same call in torchjax and in PyTorch, compare.

A sample holds numpy arrays (made into tensors in each library, floating ones requiring grad)
and plain Python values; torchjax dtypes among them become torch dtypes on the torch side.
"""

from __future__ import annotations

import contextlib
import dataclasses

import ml_dtypes
import numpy as np
import torch

import torchjax
from torchjax._ops import OPS


@dataclasses.dataclass
class Sample:
    args: tuple
    kwargs: dict
    grad: bool = True      # compare gradients through backward()
    call: object = None    # call(lib, *args, **kwargs) instead of lib.<name>
    atol: float = 1e-5
    rtol: float = 1.3e-6
    desc: str = ""
    grad_name: bool = True  # compare the grad_fn name with PyTorch's

    def __repr__(self):
        shapes = [a.shape if isinstance(a, np.ndarray) else a for a in self.args]
        return f"Sample({self.desc or shapes}, {self.kwargs})"


def S(*args, grad=True, call=None, atol=1e-5, rtol=1.3e-6, desc="", grad_name=True,
      **kwargs) -> Sample:
    return Sample(args, kwargs, grad, call, atol, rtol, desc, grad_name)


_rng = np.random.default_rng(0)


def own_make(seed: int):
    """make() drawing from a generator of its own: a samples file added later uses it, so
    that the arrays of the files loaded after it (the shared generator's draws) stay as
    they were."""
    own = np.random.default_rng(seed)

    def make_own(*shape, **kwargs):
        return make(*shape, rng=own, **kwargs)
    return make_own


@contextlib.contextmanager
def own_rng(seed: int):
    """Inside, make() without seed or rng draws from a generator of its own (for samples
    added to an existing file through its helpers)."""
    global _rng
    saved, _rng = _rng, np.random.default_rng(seed)
    try:
        yield
    finally:
        _rng = saved


def make(*shape, dtype="float32", low=-2.0, high=2.0, seed=None, rng=None) -> np.ndarray:
    """A deterministic random array; integer dtypes draw from [low, high). `rng`: a samples
    file's own generator (see own_make)."""
    if rng is None:
        rng = np.random.default_rng(seed) if seed is not None else _rng
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


class Const:
    """An array argument that never requires grad (PyTorch rejects grad there, e.g. weight)."""

    def __init__(self, array):
        self.array = array


def _to_lib(v, lib, requires_grad):
    if isinstance(v, Const):
        return lib.tensor(v.array.copy())
    if isinstance(v, np.ndarray):
        t = lib.tensor(v.copy())
        if requires_grad and t.is_floating_point():
            t.requires_grad_(True)
        return t
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, np.ndarray) for x in v):
        return type(v)(_to_lib(x, lib, requires_grad) for x in v)
    if isinstance(v, torchjax.dtype) and lib is torch:
        return getattr(torch, v.name)
    if isinstance(v, dict):
        return {k: _to_lib(x, lib, requires_grad) for k, x in v.items()}
    return v


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, (torch.Tensor, torchjax.Tensor)):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_leaves(a))
    return out


def _flat_outputs(out):
    if isinstance(out, (torch.Tensor, torchjax.Tensor)):
        return [out]
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_flat_outputs(o))
        return res
    return []


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            return t.float().numpy()
        return t.numpy()
    a = np.asarray(t.detach()._data)
    if str(a.dtype) == "bfloat16":
        return a.astype(np.float32)
    return a


def assert_same(a_tj, a_th, atol, rtol, what):
    assert str(a_tj.dtype).replace("torchjax", "torch") == str(a_th.dtype), \
        f"{what}: dtype {a_tj.dtype} != torch {a_th.dtype}"
    assert tuple(a_tj.shape) == tuple(a_th.shape), \
        f"{what}: shape {tuple(a_tj.shape)} != torch {tuple(a_th.shape)}"
    x, y = to_numpy(a_tj), to_numpy(a_th)
    if x.dtype.kind in "fc":
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(x, y, err_msg=what)


def function(lib, name):
    """The public function of row `name` in lib: torch.<name>, or for a row of another
    namespace its public name there (row "linalg_inv" is torch.linalg.inv)."""
    op = OPS.get(name)
    if op is None or op.namespace == "torch":
        return getattr(lib, name)
    mod = lib
    for part in op.namespace.split(".")[1:]:
        mod = getattr(mod, part)
    return getattr(mod, op.public_name)


def call(lib, name, sample, args):
    kwargs = _to_lib(sample.kwargs, lib, False)
    if sample.call is not None:
        return sample.call(lib, *args, **kwargs)
    return function(lib, name)(*args, **kwargs)


def compare(name: str, sample: Sample, grad: bool = True, grad_names: bool = True):
    """Run `name` on the sample in both libraries: values, dtypes, shapes, grad_fn names
    (unless grad_names is False) and gradients."""
    tj_args = tuple(_to_lib(a, torchjax, grad and sample.grad) for a in sample.args)
    th_args = tuple(_to_lib(a, torch, grad and sample.grad) for a in sample.args)
    out_th = call(torch, name, sample, th_args)
    out_tj = call(torchjax, name, sample, tj_args)
    if not isinstance(out_th, (torch.Tensor, list, tuple)):
        assert type(out_tj) is type(out_th) and out_tj == out_th, (out_tj, out_th)
        return
    outs_tj, outs_th = _flat_outputs(out_tj), _flat_outputs(out_th)
    assert len(outs_tj) == len(outs_th), f"{len(outs_tj)} outputs, torch gives {len(outs_th)}"
    for i, (a, b) in enumerate(zip(outs_tj, outs_th)):
        assert_same(a, b, sample.atol, sample.rtol, f"{name} output {i}")
        assert a.requires_grad == b.requires_grad, f"{name} output {i}: requires_grad"
        if grad_names and sample.grad_name and b.grad_fn is not None:
            assert a.grad_fn.name() == b.grad_fn.name(), f"{name} output {i}: grad_fn"
    if not (grad and sample.grad):
        return
    # backward with the same random cotangents in both
    pairs = [(a, b) for a, b in zip(outs_tj, outs_th) if b.requires_grad]
    if not pairs:
        return
    rng = np.random.default_rng(1)
    ws = [rng.uniform(-1, 1, size=tuple(b.shape)) for _, b in pairs]
    cts_th = [torch.tensor(w).to(b.dtype) for (_, b), w in zip(pairs, ws)]
    torch.autograd.backward([b for _, b in pairs], cts_th)
    torchjax.autograd.backward([a for a, _ in pairs],
                               [_same_tensor(c, a.dtype) for (a, _), c in zip(pairs, cts_th)])
    for i, (a, b) in enumerate(zip(_leaves(tj_args), _leaves(th_args))):
        if not b.requires_grad:
            continue
        if b.grad is None:
            assert a.grad is None or not np.any(to_numpy(a.grad)), f"{name}: grad of input {i}"
            continue
        assert a.grad is not None, f"{name}: no grad for input {i}"
        assert_same(a.grad, b.grad, sample.atol * 10, max(sample.rtol, 1e-5),
                    f"{name} grad of input {i}")


def _same_tensor(t, dtype):
    """torchjax's copy of torch tensor `t` (the same bits) in `dtype`, made from numpy: a
    cotangent costs no conversion program per shape."""
    t = t.detach()
    a = (t.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if t.dtype == torch.bfloat16
         else t.numpy())
    out = torchjax.tensor(a)
    return out if out.dtype == dtype else out.to(dtype)


def gradcheck(name: str, sample: Sample, eps=1e-6, atol=1e-5, rtol=1e-4):
    """Our backward() against central finite differences of our forward, in float64."""
    args = tuple(a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                 else Const(a.array.astype(np.float64)) if isinstance(a, Const)
                 and a.array.dtype.kind == "f" else a for a in sample.args)
    args64 = tuple([x.astype(np.float64) if x.dtype.kind == "f" else x for x in a]
                   if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray)
                   else a for a in args)
    tj_args = tuple(_to_lib(a, torchjax, True) for a in args64)
    leaves = [t for t in _leaves(tj_args) if t.requires_grad]
    if not leaves:
        return False
    out = _flat_outputs(call(torchjax, name, sample, tj_args))
    out = [o for o in out if o.requires_grad]
    if not out or any(o.dtype not in (torchjax.float64, torchjax.complex128) for o in out):
        return False  # finite differences need float64 outputs
    rng = np.random.default_rng(2)
    ws = [rng.uniform(-1, 1, size=tuple(o.shape)) for o in out]

    def f():
        with torchjax.no_grad():
            res = _flat_outputs(call(torchjax, name, sample, tj_args))
            res = [o for o in res if o.is_floating_point() or o.is_complex()]
            return sum(float((np.asarray(o._data) * w).sum()) for o, w in zip(res, ws))

    if all(o.dtype == torchjax.float64 for o in out):
        # the gradient of sum(o * w), f's derivative below, is backward's product with w:
        # no program for the products and sums (nor their backward) per sample
        torchjax.autograd.backward(out, [torchjax.tensor(w) for w in ws])
    else:  # (complex outputs: f takes the real part of sum(o * w))
        loss = None
        for o, w in zip(out, ws):
            term = (o * torchjax.tensor(w)).sum()
            loss = term if loss is None else loss + term
        loss.backward()
    for t in leaves:
        base = np.array(t._data)
        num = np.zeros(base.size)
        for k in range(base.size):
            for sgn in (1, -1):
                pert = base.copy().reshape(-1)
                pert[k] += sgn * eps
                t._data = torchjax.tensor(pert.reshape(base.shape))._data
                num[k] += sgn * f()
            t._data = torchjax.tensor(base)._data
        num = num.reshape(base.shape) / (2 * eps)
        ana = np.asarray(t.grad._data) if t.grad is not None else np.zeros_like(base)
        np.testing.assert_allclose(ana, num, atol=atol, rtol=rtol,
                                   err_msg=f"{name}: finite differences")
    return True


# -- helpers the sample files share ------------------------------------------------------------

def A(*vals, dtype="float32"):
    """A small array with exactly these values."""
    return np.array(vals, dtype=dtype)


def K(*vals, dtype="float32"):
    """Values at kinks or discontinuities, repeated to 65 elements: the table test compares
    gradients with PyTorch, and skips finite differences (meaningless there) above 64."""
    return np.resize(A(*vals, dtype=dtype), 65)


def Z(v, dtype="float32"):
    """A 0-d array."""
    return np.array(v, dtype=dtype)


def err(f, chars=40):
    """The error type and the start of its message, or "ok", so that both libraries compare."""
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e)[:chars]}"
    return "ok"


def method(name):
    """Call the sample as the Tensor method `name`."""
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


def inplace(name):
    """Call the sample as the in-place method `name_` on a copy of the first argument."""
    return lambda lib, x, *a, **k: getattr(x.clone(), name + "_")(*a, **k)


def backward_error(f, error=err):
    """Whether f's result requires grad, and what backward() through it does."""
    def call(lib, *args):
        args = [a.requires_grad_() for a in args]
        out = f(lib, *args)
        return (out.requires_grad, error(lambda: out.sum().backward()))
    return call


def raises(f):
    """call= for a sample that must raise the same error type and message in both libraries."""
    def call(lib, *args, **kwargs):
        try:
            f(lib, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the error itself is the result compared
            return f"{type(e).__name__}: {e}"
        raise AssertionError("expected an error")
    return call
