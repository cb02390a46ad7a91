"""What the distributed scripts here and bench/bench_distributed.py, bench/bench_mp_first_step.py
all set up: 8 virtual CPU devices, the environment of a job's processes, batches, a
cross-entropy training step, a comparison of values, the bytes device 0 holds. Imports nothing heavy at the top: `eight_devices`
must run before jax is imported."""

from __future__ import annotations

import io
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")


def eight_devices() -> None:
    """XLA's 8 virtual CPU devices for this process: read once, when jax is imported."""
    if "jax" in sys.modules:
        raise RuntimeError("eight_devices() must run before jax is imported")
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_force_host_platform_device_count=8").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")


def job_env(xla_flags: str = "", **extra) -> dict:
    """The environment of a job's processes: this tree's torchjax (and tests) importable,
    XLA_FLAGS only as given (a job's ranks see one device each unless they ask for more)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC, ROOT, env.get("PYTHONPATH", "")])
    env["XLA_FLAGS"] = xla_flags
    env.update(extra)
    return env


def train_step(model, opt):
    """PyTorch's usual step: zero the gradients, cross-entropy of the model's output,
    backward, the optimizer's step; returns the loss."""
    import torchjax.nn.functional as F

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def batches(features: int, classes: int, steps: int = 5, n: int = 32) -> list:
    """`steps` batches (x, y) of n rows: float32 inputs from a standard normal, labels in
    [0, classes); the same every call (seed 0)."""
    import numpy as np

    import torchjax as torch
    g = np.random.default_rng(0)
    return [(torch.tensor(g.standard_normal((n, features)).astype(np.float32)),
             torch.tensor(g.integers(0, classes, n))) for _ in range(steps)]


def close(a, b, tol=1e-5):
    """Two tensors' values agree to `tol` (relative and absolute)."""
    import numpy as np
    np.testing.assert_allclose(np.asarray(a.detach()._data), np.asarray(b.detach()._data),
                               rtol=tol, atol=tol)


def device0_bytes(arrays):
    """Bytes that device 0 holds of these (jax) arrays, and their total size."""
    mine = sum(s.data.nbytes for a in arrays for s in a.addressable_shards if s.device.id == 0)
    return mine, sum(a.nbytes for a in arrays)


def run_on_cache(script: str, env: dict, cache_dir) -> dict:
    """`python -c script` (from the tree's root) with TORCHJAX_CACHE_DIR=cache_dir and the
    caches on: its `RESULT <json>` line. It must succeed and warn of no unusable cache entry
    (the warm run of a test that runs it twice on one directory)."""
    import json
    import subprocess

    env = dict(env, TORCHJAX_CACHE_DIR=str(cache_dir))
    env.pop("TORCHJAX_CACHE", None)
    env.pop("TORCHJAX_CACHE_PROGRAMS", None)
    p = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "torchjax:" not in p.stderr  # no unusable entry
    [line] = [v for v in p.stdout.splitlines() if v.startswith("RESULT ")]
    return json.loads(line[7:])


def pytorch_world_of_one():
    """A generator for a module-scoped fixture: PyTorch's distributed package in this process
    (gloo, one rank, a free port), yielding its one-device CPU mesh; torn down after."""
    import socket

    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    saved = {k: os.environ.get(k) for k in ("MASTER_ADDR", "MASTER_PORT")}
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        yield init_device_mesh("cpu", (1,))
    finally:
        dist.destroy_process_group()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def as_saved_on_cuda(raw: bytes) -> bytes:
    """A torch.save file of a CPU job's tensors (DTensors on meshes told they were "cuda"),
    rewritten as a GPU job writes it: each storage's location (and a DTensor's device) is
    "cuda:0". The pickle (protocol 2) names the location "cpu" once and refers back to it."""
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                cpu = b"X\x03\x00\x00\x00cpu"
                assert data.count(cpu) == 1 and b"cuda:0" not in data
                data = data.replace(cpu, b"X\x06\x00\x00\x00cuda:0")
            dst.writestr(info.filename, data)
    return out.getvalue()


def raised(fn, *args):
    """The exception fn(*args) raises (warnings silenced), or None: for comparing what
    torchjax and PyTorch raise for the same mistake."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001  (what each library raises is the point)
            return e
    return None
