"""Several processes per host (torchrun's --nproc-per-node on a GPU host): each process joins
JAX's job driving its LOCAL_RANK's device only, as PyTorch's scripts do with
`torch.cuda.set_device(local_rank)`; JAX must be told when it joins
(`jax.distributed.initialize(local_device_ids=)`), or every process takes every GPU. Checked
by what init_process_group asks of JAX (no GPU here, and the call is stopped there)."""

import jax
import pytest

from torchjax import distributed


class _Joined(Exception):
    pass


def _asked(monkeypatch, **env):
    """The keyword arguments init_process_group passes to jax.distributed.initialize."""
    for k in ("JAX_LOCAL_DEVICE_IDS", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
              "HIP_VISIBLE_DEVICES", "LOCAL_WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(k, raising=False)
    base = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    for k, v in {**base, **env}.items():
        monkeypatch.setenv(k, v)
    got = {}

    def initialize(address, **kwargs):
        got.update(kwargs, address=address)
        raise _Joined

    monkeypatch.setattr(jax.distributed, "initialize", initialize)
    saved = jax.config.jax_cpu_collectives_implementation
    try:
        with pytest.raises(_Joined):
            distributed.init_process_group("gloo")
    finally:
        jax.config.update("jax_cpu_collectives_implementation", saved)
    assert not distributed.is_initialized()
    assert got.pop("address") == "127.0.0.1:1"
    assert got.pop("num_processes") == 2 and got.pop("process_id") == 1
    return got


def test_each_local_process_drives_its_local_rank(monkeypatch):
    assert _asked(monkeypatch, LOCAL_RANK="1", LOCAL_WORLD_SIZE="2") == {"local_device_ids": [1]}
    assert _asked(monkeypatch, LOCAL_RANK="3", LOCAL_WORLD_SIZE="8") == {"local_device_ids": [3]}


@pytest.mark.parametrize("env", [
    {"LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1"},  # one process per host: all its devices
    {},  # not started by a launcher
    {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "CUDA_VISIBLE_DEVICES": "5"},  # masked
    {"LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "JAX_LOCAL_DEVICE_IDS": "4"},  # JAX's own
])
def test_devices_chosen_elsewhere_are_left_alone(monkeypatch, env):
    assert _asked(monkeypatch, **env) == {}

