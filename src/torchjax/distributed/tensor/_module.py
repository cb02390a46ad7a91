"""distribute_module: lay out a module's parameters and buffers over a DeviceMesh."""

from __future__ import annotations

from .._reshard import reshard_
from ._placements import Replicate, sharding_of


def distribute_module(module, mesh, partition_fn, input_fn, output_fn):
    if partition_fn is None:
        for t in list(module.parameters()) + list(module.buffers()):
            reshard_(t, sharding_of(mesh, (Replicate(),) * mesh.ndim, t.shape))
    else:
        for name, sub in module.named_modules():
            partition_fn(name, sub, mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, args: input_fn(m, args, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda m, args, out: output_fn(m, out, mesh))
    return module
