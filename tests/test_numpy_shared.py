"""Shared memory with NumPy against PyTorch 2.13: Tensor.numpy(), torch.from_numpy and
as_tensor/asarray of an ndarray share one buffer; writes either way are seen by the other
side, through views of the array, views of the tensor, detach() and .data, in-place ops of
every kind and optimizer steps; and PyTorch's errors."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _numpy_shared


def both(fn):
    """fn(lib) with torch and torchjax; each returns a list of observations (lists, numbers,
    array copies) which must be equal."""
    want, got = fn(torch), fn(torchjax)
    assert len(want) == len(got)
    for i, (w, g) in enumerate(zip(want, got)):
        w, g = np.asarray(w), np.asarray(g)
        if w.dtype.kind == "f":  # an optimizer's arithmetic may round differently
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7, err_msg=f"observation {i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"observation {i}")
    return got


def snap(x):
    """An observation of a tensor or an array: a copy of its values."""
    return np.array(x.tolist())


# -- numpy(): the array is the tensor's memory -----------------------------------------------

def test_numpy_writes_both_ways():
    def f(lib):
        t = lib.zeros(2, 3)
        a = t.numpy()
        a[0, 1] = 5
        obs = [snap(t), (t * 2).tolist()]
        t.add_(1)
        obs.append(a.copy())
        t.mul_(3)
        obs.append(a.copy())
        t[1, 2] = -7
        t[0] = lib.tensor([1.0, 2.0, 3.0])
        obs.append(a.copy())
        t.copy_(lib.arange(6.0).reshape(2, 3))
        obs.append(a.copy())
        t.clamp_(1, 4).sub_(0.5)
        obs.append(a.copy())
        t[t > 2] = 0
        obs.append(a.copy())
        t.zero_()
        obs.append(a.copy())
        t.fill_(2).exp_()
        return obs + [a.copy(), a.flags.writeable, type(a).__name__]
    both(f)


def test_writes_through_array_views_reach_tensor_and_its_views():
    def f(lib):
        t = lib.arange(12.0).reshape(3, 4)  # itself a view of arange's storage
        col = t[:, 1]
        row = t[2]
        a = t.numpy()
        a[1:] += 10
        np.copyto(a[:, 0], -1.0)
        a.T[3] = 99
        np.add(a, 1, out=a)
        obs = [snap(t), snap(col), snap(row), t.sum().item()]
        ac = col.numpy()
        ac[:] = 0
        obs += [snap(t), ac.strides, t[1:, ::2].numpy().strides, t.t().numpy().strides]
        return obs
    both(f)


def test_complex_parts_share_the_storage():
    def f(lib):
        z = lib.zeros(3, dtype=lib.complex64)
        r = z.real.numpy()
        r[1] = 5
        pairs = lib.view_as_real(z).numpy()
        pairs[2, 1] = 3
        obs = [r.strides, pairs.strides, snap(lib.view_as_real(z))]
        z.mul_(2)
        return obs + [r.copy(), pairs.copy()]
    both(f)


def test_detach_and_data_share_the_storage():
    def f(lib):
        w = lib.ones(3, requires_grad=True)
        a = w.detach().numpy()
        a[0] = 2.0
        obs = [snap(w.detach())]
        w.data.add_(1)
        obs.append(a.copy())
        with lib.no_grad():
            w.mul_(2)
        obs.append(a.copy())
        (w * w).sum().backward()
        obs.append(w.grad.numpy().copy())
        d = w.detach()
        d[1] = 0.0
        obs += [a.copy(), snap(w.detach()), w.numpy(force=True).copy()]
        return obs
    both(f)


def test_numpy_errors():
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                                               "grad. Use tensor.detach\\(\\).numpy\\(\\)"):
            lib.ones(2, requires_grad=True).numpy()
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            lib.ones(2, device="meta").numpy()


# -- from_numpy, as_tensor, asarray -------------------------------------------------------------

def test_from_numpy_writes_both_ways_and_later_ops_see_later_writes():
    def f(lib):
        a = np.zeros((3, 4), np.float32)
        x = lib.from_numpy(a)
        a[1] = 2
        obs = [(x * 2).tolist()]
        a[:] = 3  # the op above ran already: it must not see this
        obs += [obs[0], (x * 2).tolist(), x.sum().item()]
        a[0, 0] = -1
        obs += [(x + 0).tolist(), x[0].tolist()]
        x.add_(1)
        x[2, 3] = 10
        x[:, 0].mul_(5)
        obs.append(a.copy())
        return obs
    both(f)


def test_an_op_dispatched_before_a_write_does_not_see_it():
    def f(lib):
        a = np.ones((256, 256), np.float32)
        x = lib.from_numpy(a)
        y = x @ x
        a[:] = 0
        return [y.sum().item(), x.sum().item()]
    both(f)


def test_from_numpy_layouts_and_dtypes():
    def f(lib):
        obs = []
        for a in (np.arange(12, dtype=np.float64).reshape(3, 4).T,
                  np.arange(10, dtype=np.int64)[::2],
                  np.arange(24, dtype=np.int32).reshape(2, 3, 4)[:, 1:],
                  np.array([True, False]), np.zeros(0, np.float32)):
            x = lib.from_numpy(a)
            a[...] = a + 1 if a.dtype != bool else ~a
            obs += [str(x.dtype).split(".")[1], x.stride(), snap(x)]
            x.logical_not_() if a.dtype == bool else x.mul_(2)
            obs.append(a.copy())
        return obs
    both(f)


def test_from_numpy_errors():
    for lib in (torch, torchjax):
        with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.object_"):
            lib.from_numpy(np.zeros(2, object))
        with pytest.raises(ValueError, match="byte order different from the native"):
            lib.from_numpy(np.zeros(2, ">f4"))
        with pytest.raises(ValueError, match="negative strides are not currently supported"):
            lib.from_numpy(np.zeros(3)[::-1])
        with pytest.raises(TypeError, match="expected np.ndarray"):
            lib.from_numpy([1.0])


def test_as_tensor_and_asarray_share_as_pytorch():
    def f(lib):
        a = np.zeros(4)
        shared = [lib.as_tensor(a), lib.asarray(a), lib.as_tensor(a, dtype=lib.float64),
                  lib.asarray(a, device="cpu"), lib.as_tensor(a, device="cpu")]
        copies = [lib.as_tensor(a, dtype=lib.float32), lib.asarray(a, copy=True),
                  lib.tensor(a), lib.asarray(a, dtype=lib.float32)]
        a[1] = 7
        obs = [snap(t) for t in shared + copies]
        shared[0][2] = 5
        obs.append(a.copy())
        with pytest.raises(ValueError, match="can't alias tensor with dtype 'Double' into "
                                             "dtype 'Float'"):
            lib.asarray(a, dtype=lib.float32, copy=False)
        return obs
    both(f)


def test_optimizer_steps_on_a_parameter_over_an_array():
    def f(lib):
        obs = []
        for make in (lambda ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),):
            a = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
            p = lib.nn.Parameter(lib.from_numpy(a))
            opt = make([p])
            for step in range(3):
                opt.zero_grad()
                ((p - 0.25) ** 2).sum().backward()
                opt.step()
                obs.append(a.copy())
                a[0, 0] = step  # the next step starts from the array's value
            obs.append(p.detach().numpy().copy())
        return obs
    both(f)


def test_grad_accumulates_into_an_exported_grad():
    def f(lib):
        w = lib.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        g = w.grad.numpy()
        (w * 3).sum().backward()
        return [g.copy()]
    both(f)


# -- torchjax's own mechanism: sharing ends when nothing else holds the memory ------------------

def _shared(t):
    return "_unshared" in type(t).__dict__


def test_sharing_ends_with_the_last_array_and_copies_stay_ordinary():
    t = torchjax.arange(6.0)
    a = t.numpy()
    v = a[2:]
    assert _shared(t) and type(t).__name__ == "Tensor"
    del a
    t.add_(1)
    assert _shared(t)  # v still holds the memory
    np.testing.assert_array_equal(v, [3, 4, 5, 6])
    del v
    t.add_(1)
    assert not _shared(t) and t.tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    x = torchjax.from_numpy(np.ones(3, np.float32))  # the temporary array is gone at once
    assert (x * 2).tolist() == [2.0, 2.0, 2.0] and not _shared(x)

    b = np.arange(4.0)
    y = torchjax.from_numpy(b)
    p = torchjax.nn.Parameter(torchjax.from_numpy(b))
    for c in (copy.deepcopy(y), copy.deepcopy(p), pickle.loads(pickle.dumps(y))):
        assert not _shared(c)
        b[0] = 9
        assert c.tolist()[0] == 0.0 and y.tolist()[0] == 9.0
        b[0] = 0
    assert type(pickle.loads(pickle.dumps(p))) is torchjax.nn.Parameter


def test_traced_reads_of_a_shared_tensor():
    import jax
    a = np.arange(4, dtype=np.float32)
    x = torchjax.from_numpy(a)
    f = jax.jit(lambda t: (t * 2)._data)
    assert f(x).tolist() == [0, 2, 4, 6]
    a[0] = 5
    assert f(x).tolist() == [10, 2, 4, 6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _numpy_shared._in_use(x.__dict__[_numpy_shared._KEY].host)


def test_compiled_step_updates_a_parameter_over_an_array():
    def f(lib, compiled):
        a = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
        lin = lib.nn.Linear(4, 2, bias=False)
        lin.weight = lib.nn.Parameter(lib.from_numpy(a))
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        x = lib.ones(3, 4)

        def step(x):
            opt.zero_grad()
            loss = lin(x).pow(2).sum()
            loss.backward()
            opt.step()
            return loss
        step = lib.compile(step) if compiled else step
        obs = []
        for i in range(3):
            obs += [step(x).item(), a.copy()]
            a[0, 0] = i  # seen by the next step
        return obs
    want, got = f(torch, False), f(torchjax, True)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_assigning_data_ends_the_sharing():
    def f(lib):
        a = np.zeros(3, np.float32)
        t = lib.from_numpy(a)
        v = t[1:]
        t.data = lib.ones(3)
        a[0] = 5
        t.add_(1)
        return [snap(t), a.copy(), snap(v).shape]
    both(f)


def test_numpy_inside_a_compiled_function_breaks_the_graph_and_reads_current_values():
    def f(lib, compiled):
        a = np.ones(3, np.float32)
        x = lib.from_numpy(a)

        def g(t):
            return t * 2, float(t.numpy().sum())
        g = lib.compile(g) if compiled else g
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torchjax says where the graph breaks
            first = g(x)
            a[0] = 5
            second = g(x)
        return [snap(first[0]), first[1], snap(second[0]), second[1]]
    want, got = f(torch, False), f(torchjax, True)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_resizing_a_shared_tensor_is_refused():
    for lib in (torch, torchjax):
        a = np.zeros(3)
        x = lib.from_numpy(a)
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            lib.ones(5, dtype=lib.float64, out=x)
        assert a.tolist() == [0.0, 0.0, 0.0]


def test_large_arrays_are_copied_with_a_warning(monkeypatch):
    monkeypatch.setenv("TORCHJAX_NUMPY_SHARE_MB", "0.001")
    monkeypatch.setattr(_numpy_shared, "_COPY_WARNED", [False])
    a = np.arange(1000, dtype=np.float32)
    with pytest.warns(UserWarning, match="is copied instead of shared"):
        t = torchjax.from_numpy(a)
    a[0] = 7.0
    assert t[0].item() == 0.0  # a copy: the write is not seen (and the warning said so)
    small = np.arange(4, dtype=np.float32)
    monkeypatch.setenv("TORCHJAX_NUMPY_SHARE_MB", "4")
    s = torchjax.from_numpy(small)
    small[0] = 7.0
    assert s[0].item() == 7.0
