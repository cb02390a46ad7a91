"""DTensor: a Tensor whose array is laid out over a DeviceMesh by a NamedSharding.

In PyTorch each rank holds its local shard and DTensor's ops add the collectives. In JAX one
program holds the global array, sharded over the devices, and XLA adds the collectives; so a
DTensor here *is* its global value (its shape is the global shape, `numpy()` gathers it) and
carries its mesh and placements. Ops on it run sharded and give DTensors whose placements
follow PyTorch's rules (_propagate.py); inside torchjax.compile they give plain Tensors
(`DTensor.from_sharded(t, mesh)` reads the placements of a sharded result back).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..._autograd import grad_mode
from ..._tensor import Tensor
from ...interop import from_jax
from ...nn.parameter import Parameter
from .. import _per_rank
from .._reshard import reshard
from ..device_mesh import DeviceMesh, init_device_mesh
from ._placements import Partial, Replicate, Shard, normalize, placements_of, sharding_of

__all__ = ["DTensor", "distribute_tensor", "distribute_module"]


def _default_mesh():
    # every device of the default backend, as PyTorch's default mesh is the world
    backend = jax.default_backend()
    kind = {"cpu": "cpu", "gpu": "cuda"}.get(backend, "tpu")
    return init_device_mesh(kind, (len(jax.devices()),))


def _as_dtensor(t: Tensor, mesh: DeviceMesh, placements) -> DTensor:
    """t's value and autograd identity (grad_fn) as a DTensor."""
    d = DTensor._wrap(t._data, t._requires_grad)
    d._grad_fn = t._grad_fn
    d._output_nr = t._output_nr
    d._mesh = mesh
    d._placements = tuple(placements)
    return d


def _same_layout(t: Tensor, like: DTensor) -> DTensor:
    """t (an alias of `like`'s values, made as a plain Tensor) as a DTensor of like's layout."""
    t.__class__ = DTensor
    t._mesh = like._mesh
    t._placements = like._placements
    return t


# what the first DTensor installs (_propagate.py: the hook every op then pays): importing
# torch.distributed.tensor must not slow down a program that makes no DTensor
_ON_FIRST: list = []


class DTensor(Tensor):
    """A tensor laid out over a DeviceMesh (its placements say how, dimension by dimension)."""

    __slots__ = ()

    @classmethod
    def _wrap(cls, arr, requires_grad=False):
        while _ON_FIRST:
            _ON_FIRST.pop()()
        return super()._wrap(arr, requires_grad)

    @property
    def device_mesh(self) -> DeviceMesh:
        """The DeviceMesh the tensor is laid out on."""
        return self._mesh

    @property
    def placements(self) -> tuple:
        """How the tensor is laid out along each mesh dimension (Shard, Replicate or Partial), one
        per dimension.
        """
        return self._placements

    def __repr__(self) -> str:
        # PyTorch's local tensor has no history (its ops run below autograd), and requires
        # grad where it is the user's leaf: a leaf DTensor's, or the tensor from_local got;
        # a Parameter's does not (the Parameter itself requires grad). Formatted as PyTorch's
        # f-string formats it (a 0-d one as its value)
        with grad_mode.no_grad():
            local = self.to_local().detach()
        if self.requires_grad and (self.__dict__.get("_local_requires_grad") or (
                self.is_leaf and not isinstance(self, Parameter))):
            local.requires_grad_(True)
        return (f"DTensor(local_tensor={local}, device_mesh={self._mesh}, "
                f"placements={self._placements})")

    # a DTensor's alias without history is a DTensor, as in PyTorch: a module's state_dict
    # (param.detach()) of an FSDP2 or tensor-parallel model holds DTensors
    def detach(self) -> DTensor:
        """A DTensor sharing this one's values, mesh and placements, with no autograd history."""
        return _same_layout(Tensor.detach(self), self)

    @property
    def data(self) -> DTensor:
        """The same values, mesh and placements without the autograd history (see Tensor.data)."""
        return _same_layout(Tensor.data.fget(self), self)

    @data.setter
    def data(self, value):
        Tensor.data.fset(self, value)

    # -- construction from shards ---------------------------------------------------------

    @staticmethod
    def from_local(local_tensor: Tensor, device_mesh: DeviceMesh | None = None,
                   placements=None, *, run_check: bool = False, shape=None,
                   stride=None) -> DTensor:
        """The DTensor whose shard on each device of this process is `local_tensor`.

        Every rank of a PyTorch job passes its own local tensor; one JAX process drives all of
        its devices, so its local tensor stands for each of them: Shard(d) stacks copies along
        d, Partial("sum") adds them."""
        mesh = device_mesh or _default_mesh()
        placements = normalize(placements, mesh, local_tensor.ndim)
        if shape is not None or stride is not None:
            raise NotImplementedError("DTensor.from_local(shape=, stride=) is not supported by "
                                      "torchjax: the global shape follows from the placements")
        if jax.process_count() > 1:
            _per_rank.refuse("DTensor.from_local")
            return _from_process_local(local_tensor, mesh, placements)
        sizes = [mesh.size(i) for i in range(mesh.ndim)]
        glob = _from_local(local_tensor, tuple(placements), tuple(sizes))
        sharding = sharding_of(mesh, placements, glob.shape)
        d = _as_dtensor(reshard(glob, sharding), mesh, placements)
        d.__dict__["_local_requires_grad"] = local_tensor.requires_grad  # (for printing)
        return d

    @staticmethod
    def from_sharded(t: Tensor, device_mesh: DeviceMesh) -> DTensor:
        """A tensor whose array is sharded on device_mesh's JAX mesh (an op's result), seen as a
        DTensor (torchjax only: PyTorch's ops return DTensors directly)."""
        return _as_dtensor(t, device_mesh,
                           placements_of(device_mesh, t._data.sharding, t.ndim))

    # -- reading ----------------------------------------------------------------------------

    def to_local(self, *, grad_placements=None) -> Tensor:
        """The shard this process's first device of the mesh holds (a rank's local tensor)."""
        divisor = 1
        for name, p in zip(self._mesh._dims, self._placements):
            if isinstance(p, Partial) and p.reduce_op == "sum":
                divisor *= self._mesh.jax_mesh.shape[name]
        if jax.process_count() > 1:
            _per_rank.refuse("DTensor.to_local")
            # each process reads its own shard: a program would differ between processes
            # (each slices its own index) and they would wait for each other forever
            shard = self._data.addressable_shards[0].data
            return Tensor._wrap(shard / divisor if divisor != 1 else shard)
        return _take(self, _local_index(self), divisor)

    def full_tensor(self, *, grad_placements=None) -> Tensor:
        """The whole value, replicated on every device of the mesh."""
        return reshard(self, sharding_of(self._mesh, (Replicate(),) * self._mesh.ndim,
                                         self.shape))

    def redistribute(self, device_mesh: DeviceMesh | None = None, placements=None, *,
                     async_op: bool = False, forward_dtype=None, backward_dtype=None) -> DTensor:
        """The same value laid out as `placements` (XLA moves the data)."""
        mesh = device_mesh or self._mesh
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        placements = list(placements)
        for old, new in zip(self._placements, placements):  # (PyTorch's rule, any source)
            if isinstance(new, Partial) and old != new:
                raise RuntimeError(f"Can not redistribute from {old} to {new}, redistributing "
                                   f"to Partial is for internal use only!")
        if mesh.jax_mesh != self._mesh.jax_mesh:
            raise NotImplementedError("DTensor.redistribute to another DeviceMesh is not "
                                      "supported by torchjax; distribute_tensor(t.full_tensor())")
        placements = normalize(placements, mesh, self.ndim)
        return _as_dtensor(reshard(self, sharding_of(mesh, placements, self.shape)), mesh,
                           placements)


def distribute_tensor(tensor: Tensor, device_mesh: DeviceMesh | None = None, placements=None,
                      *, src_data_rank: int | None = 0) -> DTensor:
    """`tensor` laid out over `device_mesh` as `placements` (default: replicated): a leaf
    DTensor that requires grad when tensor does, as PyTorch's."""
    mesh = device_mesh or _default_mesh()
    placements = normalize(placements, mesh, tensor.ndim)
    if isinstance(tensor, DTensor):  # (as PyTorch's: given back when nothing changes)
        if tensor.device_mesh != mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh "
                             f"{tensor.device_mesh} to a different device mesh {mesh}.")
        if tensor.placements != placements:
            raise ValueError(f"Cannot distribute a DTensor with placements "
                             f"{tensor.placements} to a different placements "
                             f"{list(placements)}. do you want to call `redistribute` "
                             f"instead?")
        return tensor
    _per_rank.refuse("distribute_tensor")  # (PyTorch's takes rank 0's values)
    sharding = sharding_of(mesh, placements, tensor.shape)
    with grad_mode.no_grad():
        placed = reshard(tensor.detach(), sharding)
    d = _as_dtensor(placed, mesh, placements)
    d._requires_grad = tensor._requires_grad
    d.register_post_accumulate_grad_hook(_grad_as_dtensor)
    return d


def _grad_as_dtensor(d) -> None:
    """A DTensor leaf's .grad is a DTensor laid out as the leaf, as PyTorch's."""
    g = d._grad
    if g is not None and type(g) is not DTensor:
        from .._reshard import place_array
        g._data = place_array(g._data, sharding_of(d._mesh, d._placements, tuple(d.shape)))
        g.__class__ = DTensor
        g._mesh, g._placements = d._mesh, d._placements


def distribute_module(module, device_mesh: DeviceMesh | None = None, partition_fn=None,
                      input_fn=None, output_fn=None):
    """Replicates every parameter and buffer over the mesh, or lays them out by
    partition_fn(name, submodule, mesh); input_fn/output_fn become forward hooks."""
    from ._module import distribute_module as impl
    return impl(module, device_mesh or _default_mesh(), partition_fn, input_fn, output_fn)


class DParameter(DTensor, Parameter):
    """A parameter laid out over a mesh: both an nn.Parameter and a DTensor, as the
    parameters PyTorch's fully_shard and parallelize_module make."""

    __slots__ = ()


def lay_out_parameter(p, mesh: DeviceMesh, placements, sharding) -> None:
    """Moves parameter p onto `sharding` in place and makes it a DParameter (same object:
    optimizers and modules that hold it keep working)."""
    from .._reshard import place_array
    p._data = place_array(p._data, sharding)
    if p._grad is not None:
        p._grad._data = place_array(p._grad._data, sharding)
    p.__class__ = DParameter
    p._mesh = mesh
    p._placements = tuple(placements)
    p._sharding = sharding


# -- the pieces as JAX functions (each one recorded op with JAX's gradient) -------------------

@from_jax(name="FromLocal", _every_input=True)
def _from_local(x, placements, sizes):
    for p, n in zip(placements, sizes):
        if isinstance(p, Shard):
            x = jnp.concatenate([x] * n, axis=p.dim)
        elif isinstance(p, Partial) and p.reduce_op == "sum":
            x = x * n
    return x


@from_jax(name="ToLocal", _every_input=True)
def _take(x, index, divisor):
    x = x[tuple(slice(*s) for s in index)]
    return x / divisor if divisor != 1 else x


def _local_index(dt: DTensor) -> tuple:
    """This process's first device's piece of dt, as PyTorch's Shard(d) gives it on that rank:
    torch.chunk's piece (ceil(size / n) long, the last ones shorter or empty), mesh dimension
    by mesh dimension. For an even split it is exactly the shard that device holds."""
    mesh = dt._mesh
    coord = mesh.get_coordinate()
    if coord is None:
        raise RuntimeError("DTensor.to_local: this process holds no device of the mesh")
    index = [[0, n, None] for n in dt.shape]
    for m, p in enumerate(dt._placements):
        if isinstance(p, Shard):
            start, stop, _ = index[p.dim]
            size, n = stop - start, mesh.size(m)
            chunk = -(-size // n)
            lo = min(coord[m] * chunk, size)
            index[p.dim] = [start + lo, start + min(lo + chunk, size), None]
    return tuple(tuple(i) for i in index)


def _from_process_local(local: Tensor, mesh: DeviceMesh, placements) -> DTensor:
    """from_local across processes: each process's array is its devices' shards."""
    if any(isinstance(p, Partial) for p in placements):
        raise NotImplementedError("DTensor.from_local with Partial placements across "
                                  "processes is not supported by torchjax yet; all_reduce the "
                                  "local tensors first")
    shape = list(local.shape)
    for name, p in zip(mesh._dims, placements):
        if isinstance(p, Shard):
            shape[p.dim] *= mesh.jax_mesh.shape[name]
    sharding = sharding_of(mesh, placements, shape)
    arrs = [jax.device_put(local._data, d) for d in sharding.addressable_devices]
    glob = jax.make_array_from_single_device_arrays(tuple(shape), sharding, arrs)
    return _as_dtensor(Tensor._wrap(glob), mesh, placements)
