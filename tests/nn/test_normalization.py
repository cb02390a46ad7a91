"""Normalization layers against PyTorch: outputs, gradients, running statistics over a few
training steps, eval mode, state_dict, repr and error messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)


def _arr(*shape):
    return _rng.normal(size=shape).astype(np.float32)


def _pair(name, *args, **kwargs):
    """The same layer in both libraries, torchjax's with torch's (randomised) state."""
    tm = getattr(torch.nn, name)(*args, **kwargs)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(_arr(*p.shape)))
    jm = getattr(torchjax.nn, name)(*args, **kwargs)
    jm.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, jm


def _close(a, b, what, tol=1e-5):
    a = a.detach().numpy() if hasattr(a, "detach") else a
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


def _step(tm, jm, shape):
    """One forward/backward with the same input and cotangent; compares everything."""
    x, ct = _arr(*shape), _arr(*shape)
    xt = torch.tensor(x, requires_grad=True)
    xj = torchjax.tensor(x, requires_grad=True)
    yt, yj = tm(xt), jm(xj)
    _close(yj, yt, "output")
    assert type(yj.grad_fn).__name__ == type(yt.grad_fn).__name__
    (yt * torch.tensor(ct)).sum().backward()
    (yj * torchjax.tensor(ct)).sum().backward()
    _close(xj.grad, xt.grad, "input grad", 1e-4)
    for (n, pt), (_, pj) in zip(tm.named_parameters(), jm.named_parameters()):
        _close(pj.grad, pt.grad, f"grad of {n}", 1e-4)
        pt.grad = pj.grad = None
    for (n, bt), (_, bj) in zip(tm.named_buffers(), jm.named_buffers()):
        assert bj.dtype.name == str(bt.dtype).split(".")[1], n
        _close(bj, bt, f"buffer {n}")


CASES = [
    ("BatchNorm1d", (3,), {}, (4, 3)),
    ("BatchNorm1d", (3,), {"momentum": None}, (4, 3, 5)),
    ("BatchNorm2d", (3,), {"eps": 1e-3, "bias": False}, (2, 3, 4, 4)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (2, 3, 3, 3)),
    ("BatchNorm3d", (2,), {"affine": False, "momentum": 0.3}, (2, 2, 2, 3, 3)),
    ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 5)),
    ("InstanceNorm2d", (3,), {}, (3, 4, 4)),
    ("InstanceNorm3d", (2,), {"affine": True}, (2, 2, 2, 3, 3)),
    ("LayerNorm", ([3, 4],), {"bias": False}, (2, 3, 4)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3)),
    ("RMSNorm", ([3, 4],), {"eps": 1e-3}, (2, 3, 4)),
    ("LocalResponseNorm", (3,), {"alpha": 0.1, "k": 2.0}, (2, 5, 3)),
]


@pytest.mark.parametrize("name, args, kwargs, shape", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_layer_matches_pytorch(name, args, kwargs, shape):
    tm, jm = _pair(name, *args, **kwargs)
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in jm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    for _ in range(3):
        _step(tm, jm, shape)
    tm.eval()
    jm.eval()
    _step(tm, jm, shape)
    for k, v in tm.state_dict().items():
        _close(jm.state_dict()[k], v, k)


def test_num_batches_tracked_and_cumulative_average():
    tm, jm = _pair("BatchNorm1d", 2, momentum=None)
    xs = [_arr(5, 2) for _ in range(3)]
    for x in xs:
        tm(torch.tensor(x))
        jm(torchjax.tensor(x))
    assert jm.num_batches_tracked.dtype == torchjax.int64 and int(jm.num_batches_tracked) == 3
    # momentum=None: the plain average of the batch statistics
    _close(jm.running_mean, torch.tensor(np.mean([x.mean(0) for x in xs], 0)), "mean")
    _close(jm.running_var, tm.running_var, "var")


def test_functional_batch_norm_updates_buffers_in_place():
    x = _arr(6, 3)
    rm, rv = torchjax.zeros(3), torchjax.ones(3)
    torchjax.nn.functional.batch_norm(torchjax.tensor(x), rm, rv, training=True, momentum=0.5)
    trm = torch.zeros(3)
    torch.nn.functional.batch_norm(torch.tensor(x), trm, torch.ones(3), training=True)
    assert rm._version == trm._version == 0  # PyTorch's kernel keeps the version
    _close(rm, torch.tensor(0.5 * x.mean(0)), "running_mean")
    _close(rv, torch.tensor(0.5 + 0.5 * x.var(0, ddof=1)), "running_var (unbiased)")


def test_functional_instance_norm_running_stats():
    x = _arr(2, 3, 5)
    stats = {}
    for lib in (torch, torchjax):
        rm, rv = lib.zeros(3), lib.ones(3)
        lib.nn.functional.instance_norm(lib.tensor(x), rm, rv, momentum=0.2)
        stats[lib] = (rm, rv)
    for a, b in zip(stats[torchjax], stats[torch]):
        _close(a, b, "instance_norm running stats")


def _same_error(f, exc=Exception):
    """f(lib) raises the same error type and message in both libraries."""
    with pytest.raises(exc) as want:
        f(torch)
    with pytest.raises(type(want.value), match=_literal(str(want.value).splitlines()[0])):
        f(torchjax)


def _literal(s):
    import re
    return re.escape(s)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.BatchNorm1d(3)(lib.zeros(2, 3, 4, 4)),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.zeros(2, 3, 4)),
    lambda lib: lib.nn.BatchNorm3d(3)(lib.zeros(2, 3, 4, 4)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.zeros(1, 3)),
    lambda lib: lib.nn.InstanceNorm2d(3, affine=True)(lib.zeros(2, 4, 3, 3)),
    lambda lib: lib.nn.InstanceNorm1d(3)(lib.zeros(2, 3, 1)),
    lambda lib: lib.nn.GroupNorm(2, 3),
    lambda lib: lib.nn.LayerNorm(3)(lib.zeros(2, 4)),
    lambda lib: lib.nn.functional.batch_norm(lib.zeros(2, 3), lib.zeros(3), lib.ones(3),
                                             training=True, eps=0),
    lambda lib: lib.nn.functional.batch_norm(lib.zeros(2, 3), lib.zeros(4), lib.ones(4)),
    lambda lib: lib.nn.functional.batch_norm(lib.zeros(2, 3), None, None),
    lambda lib: lib.nn.functional.batch_norm(lib.zeros(2, 3), lib.zeros(3), None,
                                             training=True),
    lambda lib: lib.nn.functional.batch_norm(lib.zeros(2, 3).double(), lib.zeros(3),
                                             lib.ones(3)),
    lambda lib: lib.nn.functional.instance_norm(lib.zeros(2, 3, 4), use_input_stats=False),
    lambda lib: lib.nn.functional.group_norm(lib.zeros(2, 3, 4), 2),
    lambda lib: lib.nn.functional.group_norm(lib.zeros(3), 3),
    lambda lib: lib.nn.functional.group_norm(lib.zeros(2, 3, 4), 3, lib.ones(2)),
    lambda lib: lib.nn.functional.layer_norm(lib.zeros(2, 3), 3),
    lambda lib: lib.nn.functional.layer_norm(lib.zeros(2, 3), (3,), lib.ones(2)),
    lambda lib: lib.nn.functional.layer_norm(lib.zeros(2, 3).long(), (3,)),
    lambda lib: lib.nn.functional.rms_norm(lib.zeros(2, 3), (2,)),
    lambda lib: lib.nn.functional.local_response_norm(lib.zeros(2, 3), 2),
])
def test_errors_match_pytorch(make):
    _same_error(make)


def test_instance_norm_warns_when_num_features_differs():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        torchjax.nn.InstanceNorm1d(3)(torchjax.zeros(2, 4, 5))


def test_rms_norm_default_eps_is_machine_epsilon():
    x = np.full((2, 4), 1e-4, np.float32)
    for dt in ("float32", "float64", "float16"):
        got = torchjax.nn.functional.rms_norm(torchjax.tensor(x).to(getattr(torchjax, dt)), (4,))
        want = torch.nn.functional.rms_norm(torch.tensor(x).to(getattr(torch, dt)), (4,))
        assert got.dtype.name == dt
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-3)
