"""torch.from_file (src/torchjax/_from_file.py) against PyTorch 2.13: read and mapped
(shared) files, the file grown for a longer mapping, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _fresh(path):
    np.arange(6, dtype=np.float32).tofile(path)
    return str(path)


def test_read_and_shared(tmp_path):
    got = []
    for lib in (torch, torchjax):
        path = _fresh(tmp_path / f"{lib.__name__}.bin")
        a = lib.from_file(path, size=4, dtype=lib.float32)
        b = lib.from_file(path, shared=True, size=6, dtype=lib.float32)
        b[0] = 9.0  # reaches the file
        c = lib.from_file(path, shared=False, size=6)
        c[1] = 7.0  # does not
        grown = lib.from_file(path, shared=True, size=8, dtype=lib.float32)
        got.append((a.tolist(), np.fromfile(path, dtype=np.float32).tolist(), str(c.dtype),
                    grown.tolist(), lib.from_file(path).tolist(),
                    lib.from_file(path, size=3, dtype=lib.float64).shape[0]))
    assert got[0] == got[1]


def test_errors(tmp_path):
    for lib in (torch, torchjax):
        path = _fresh(tmp_path / f"{lib.__name__}.bin")
        with pytest.raises(RuntimeError, match="size <24> is smaller than the required mapping "
                                               "size <40>"):
            lib.from_file(path, size=10, dtype=lib.float32)
        with pytest.raises(RuntimeError, match="unable to open file <.*> in read-only mode: No "
                                               "such file or directory"):
            lib.from_file(str(tmp_path / "missing.bin"), size=2)
