"""The legacy tensor types (torch.FloatTensor, torch.cuda.LongTensor, ...), Tensor.type(),
torch.set_default_tensor_type and torch.typename, against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax


def _uses(lib):
    x = lib.ones(2)
    out = [x.type(), str(x.type(lib.DoubleTensor).dtype), str(x.type("torch.LongTensor").dtype),
           str(x.type(lib.int32).dtype), isinstance(x, lib.FloatTensor),
           isinstance(x, lib.DoubleTensor), isinstance(x.long(), lib.LongTensor),
           isinstance(x, lib.cuda.FloatTensor), isinstance(1.0, lib.FloatTensor),
           type(lib.FloatTensor).__name__, str(lib.FloatTensor.dtype), lib.FloatTensor.is_cuda,
           issubclass(lib.FloatTensor, lib.Tensor), repr(lib.FloatTensor),
           repr(lib.cuda.LongTensor), lib.typename(x), lib.typename(1),
           lib.typename(lib.nn.Linear(1, 1)),
           str(lib.nn.Linear(2, 2).type(lib.DoubleTensor).weight.dtype)]
    for t in (lib.FloatTensor([1, 2]), lib.BoolTensor([1, 0]), lib.ByteTensor([3]),
              lib.FloatTensor(np.ones(2)), lib.LongTensor(range(3)), lib.DoubleTensor([[1.5]])):
        out.append((tuple(t.shape), str(t.dtype), t.numpy().tolist()))
    # sizes give uninitialised memory in PyTorch: compare shapes and dtypes only
    for t in (lib.FloatTensor(2, 3), lib.LongTensor(2), lib.FloatTensor(lib.Size([2])),
              lib.FloatTensor(), lib.HalfTensor(1)):
        out.append((tuple(t.shape), str(t.dtype)))
    t = lib.ones(2)
    out.append(lib.FloatTensor(t) is t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.set_default_tensor_type(lib.DoubleTensor)
        out.append(str(lib.zeros(1).dtype))
        lib.set_default_tensor_type("torch.FloatTensor")
        out.append(str(lib.zeros(1).dtype))
    return [str(v).replace("torchjax", "torch") for v in out]


def test_legacy_types_against_pytorch():
    assert _uses(torchjax) == _uses(torch)


def test_legacy_type_errors():
    with pytest.raises(TypeError, match="expected FloatTensor"):
        torchjax.FloatTensor(torchjax.ones(2, dtype=torchjax.int64))
    with pytest.warns(UserWarning, match="set_default_tensor_type"), \
            pytest.raises(TypeError, match="only floating-point types"):
        torchjax.set_default_tensor_type(torchjax.LongTensor)


def _settings(lib):
    out = [lib.are_deterministic_algorithms_enabled(), lib.get_deterministic_debug_mode(),
           lib.get_float32_matmul_precision()]
    lib.use_deterministic_algorithms(True, warn_only=True)
    out += [lib.are_deterministic_algorithms_enabled(),
            lib.is_deterministic_algorithms_warn_only_enabled(),
            lib.get_deterministic_debug_mode()]
    lib.set_deterministic_debug_mode("error")
    out.append(lib.get_deterministic_debug_mode())
    lib.use_deterministic_algorithms(False)
    lib.set_float32_matmul_precision("high")
    out += [lib.get_float32_matmul_precision(), lib.backends.cuda.matmul.allow_tf32]
    lib.set_float32_matmul_precision("highest")
    lib.set_num_threads(2)
    out.append(lib.get_num_threads())
    for f in (lambda: lib.set_num_threads(0), lambda: lib.use_deterministic_algorithms("x"),
              lambda: lib.set_deterministic_debug_mode("x")):
        try:
            f()
        except (RuntimeError, TypeError) as e:
            out.append(f"{type(e).__name__}: {e}")
    return out


def test_process_settings_against_pytorch():
    threads = torch.get_num_threads()
    try:
        assert _settings(torchjax) == _settings(torch)
    finally:
        torch.set_num_threads(threads)
        torch.backends.cuda.matmul.allow_tf32 = False
