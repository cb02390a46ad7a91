"""SyncBatchNorm and convert_sync_batchnorm against PyTorch 2.13 (one process, one device: both
use plain batch statistics; on a mesh the batch is global, checked in ddp_script.py)."""

import numpy as np
import pytest
import torch

import torchjax


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.ReLU())


def test_convert_sync_batchnorm_and_forward_match_pytorch():
    t = torch.nn.SyncBatchNorm.convert_sync_batchnorm(_net(torch))
    j = torchjax.nn.SyncBatchNorm.convert_sync_batchnorm(_net(torchjax))
    assert repr(j) == repr(t)
    j.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    tx, jx = torch.tensor(x, requires_grad=True), torchjax.tensor(x, requires_grad=True)
    t(tx).pow(2).sum().backward()
    j(jx).pow(2).sum().backward()
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (k, a), b in zip(t.state_dict().items(), j.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    assert list(j.state_dict()) == list(t.state_dict())


def test_sync_batchnorm_errors_as_pytorch():
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        torchjax.nn.SyncBatchNorm(3)(torchjax.randn(3))
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        torch.nn.SyncBatchNorm(3)(torch.randn(3))
