"""torch.optim.swa_utils (AveragedModel, the SWA and EMA update functions, update_bn and
SWALR) against PyTorch."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import torchjax


def _swa(lib):
    su = importlib.import_module(lib.__name__ + ".optim.swa_utils")
    out = []
    opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
    for kw in (dict(anneal_strategy="x"), dict(anneal_epochs=-1), dict(anneal_epochs=1.5)):
        with pytest.raises(ValueError) as e:
            su.SWALR(opt, 0.01, **kw)
        out.append(str(e.value))
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        su.AveragedModel(lib.nn.Linear(1, 1), avg_fn=lambda a, b, n: a,
                         multi_avg_fn=lambda a, b, n: None)
    m = su.AveragedModel(lib.nn.Linear(2, 1))
    out += [int(m.n_averaged), str(m.n_averaged.dtype), list(m.state_dict()),
            repr(m).replace("torchjax", "torch")]
    for strategy in ("cos", "linear"):
        for epochs in (3, 0):
            opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
            s = su.SWALR(opt, [0.01], anneal_epochs=epochs, anneal_strategy=strategy)
            lrs = [opt.param_groups[0]["lr"]]
            for _ in range(5):
                opt.step()
                s.step()
                lrs.append(opt.param_groups[0]["lr"])
            out.append([round(v, 10) for v in lrs])

    net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.from_numpy(np.arange(p.numel(), dtype=np.float32).reshape(p.shape) / 7))
    for kw in ({}, dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
               dict(avg_fn=su.get_ema_avg_fn(0.8)), dict(use_buffers=True),
               dict(avg_fn=su.get_swa_avg_fn()), dict(multi_avg_fn=su.get_swa_multi_avg_fn())):
        avg = su.AveragedModel(net, **kw)
        for k in range(3):
            with lib.no_grad():
                for p in net.parameters():
                    p.mul_(1.5).add_(0.1)
            net(lib.from_numpy(np.ones((4, 3), np.float32) * k))
            avg.update_parameters(net)
        out.append((avg.module[0].weight.flatten().tolist(), avg.module[1].running_mean.tolist(),
                    int(avg.module[1].num_batches_tracked), int(avg.n_averaged)))
    loader = [(lib.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3) * i), 0)
              for i in range(3)]
    avg.eval()
    su.update_bn(loader, avg)
    out.append((avg.module[1].running_mean.tolist(), avg.module[1].running_var.tolist(),
                avg.module[1].momentum, avg.training))
    return out


def _close(a, b):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float):
        assert abs(a - b) <= 1e-5 * max(1.0, abs(b)), (a, b)
    else:
        assert a == b, (a, b)


def test_swa_utils_against_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(_swa(torchjax), _swa(torch))
