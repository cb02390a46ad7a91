"""DeviceMesh: PyTorch's named grid of devices, as a `jax.sharding.Mesh`.

PyTorch runs one process per device and a DeviceMesh tells each process where it sits in the
grid. JAX drives every device of a mesh from one program (one per host), so a DeviceMesh here
holds the whole `jax.sharding.Mesh` and the names of the dimensions it stands for:
`mesh["dp"]` is the same JAX mesh seen through its "dp" dimension only, and a placement on it
shards over "dp" and replicates over every other dimension, which is what a PyTorch rank's
sub-mesh means.
"""

from __future__ import annotations

import math
import os

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

from .._strides import contiguous_strides
from .._tensor import Tensor

__all__ = ["DeviceMesh", "init_device_mesh"]

# torch device types -> JAX platforms
_PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu", "xla": None}


def _devices(device_type: str) -> list:
    if device_type not in _PLATFORMS:
        raise ValueError(f"DeviceMesh: unknown device_type {device_type!r}; use one of "
                         f"{sorted(_PLATFORMS)}")
    platform = _PLATFORMS[device_type]
    try:
        devs = jax.devices(platform) if platform else jax.devices()
    except RuntimeError:
        raise RuntimeError(f"DeviceMesh: no {device_type!r} devices here (JAX has "
                           f"{sorted({d.platform for d in jax.devices()})})") from None
    # process by process, so rank r (torchrun's numbering) holds the r-th block of devices
    return sorted(devs, key=lambda d: (d.process_index, d.id))


class DeviceMesh:
    """A grid of devices with named dimensions, backed by a `jax.sharding.Mesh`.

    Example::

        mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        mesh["tp"].size()        # 4
        mesh.jax_mesh            # Mesh('dp': 2, 'tp': 4)
    """

    def __init__(self, device_type: str, mesh, *, mesh_dim_names=None,
                 _init_backend: bool = True):
        ids = np.asarray(mesh.tolist() if isinstance(mesh, Tensor) else mesh, dtype=np.int64)
        devs = _devices(device_type)
        if ids.size and (ids.min() < 0 or ids.max() >= len(devs)):
            raise ValueError(f"DeviceMesh: device ids {ids.tolist()} are out of range: there are "
                             f"{len(devs)} {device_type} devices")
        if len(set(ids.flat)) != ids.size:
            raise ValueError(f"DeviceMesh: a device appears twice in {ids.tolist()}")
        names = tuple(mesh_dim_names) if mesh_dim_names is not None else tuple(
            f"dim_{i}" for i in range(ids.ndim))
        if len(names) != ids.ndim:
            raise ValueError(f"DeviceMesh: {len(names)} mesh_dim_names for a {ids.ndim}-d mesh")
        if len(set(names)) != len(names):
            raise RuntimeError(f"DeviceMesh: mesh_dim_names {names} has duplicates")
        self.device_type = device_type
        self._ids = ids
        # Auto axes: XLA's partitioner propagates shardings through every op (an Explicit
        # axis, jax.make_mesh's default, would make the sharding part of each array's type,
        # and eager autograd's cotangents would have to carry it too)
        self.jax_mesh = Mesh(np.array([devs[i] for i in ids.flat]).reshape(ids.shape), names,
                             axis_types=(AxisType.Auto,) * len(names))
        self._dims = names  # the dimensions of jax_mesh this DeviceMesh stands for
        self._named = mesh_dim_names is not None

    @classmethod
    def _view(cls, root: DeviceMesh, dims: tuple) -> DeviceMesh:
        sub = object.__new__(cls)
        sub.__dict__.update(root.__dict__)
        sub._dims = dims
        return sub

    # -- PyTorch's attributes ------------------------------------------------------------------

    @property
    def mesh_dim_names(self):
        """The names of the mesh dimensions, or None if none were given."""
        return self._dims if self._named else None

    @property
    def ndim(self) -> int:
        """The number of mesh dimensions."""
        return len(self._dims)

    @property
    def shape(self) -> tuple:
        """The number of devices along each mesh dimension."""
        return tuple(self.jax_mesh.shape[n] for n in self._dims)

    @property
    def mesh(self) -> Tensor:
        """The device ids of this (sub-)mesh: for a sub-mesh, the slice through this process's
        first device, as a PyTorch rank sees the slice through itself."""
        from .._creation import tensor
        full = self._ids
        names = self.jax_mesh.axis_names
        here = self.get_coordinate_full()
        index = tuple(slice(None) if n in self._dims else here[i] for i, n in enumerate(names))
        order = [n for n in names if n in self._dims]
        sub = full[index].transpose([order.index(n) for n in self._dims])
        return tensor(sub.tolist())

    def size(self, mesh_dim: int | str | None = None) -> int:
        """The number of devices along `mesh_dim` (a position or a name), or in the whole mesh when
        it is None.
        """
        if mesh_dim is None:
            return math.prod(self.shape)
        return self.jax_mesh.shape[self._name(mesh_dim)]

    def __getitem__(self, names) -> DeviceMesh:
        if not self._named:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names")
        names = (names,) if isinstance(names, str) else tuple(names)
        if any(n not in self._dims for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names "
                           f"are {list(self._dims)}.")
        if [self._dims.index(n) for n in names] != sorted(self._dims.index(n) for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should "
                           f"be in ascending order.")
        return DeviceMesh._view(self, names)

    def _name(self, mesh_dim) -> str:
        if isinstance(mesh_dim, str):
            if mesh_dim not in self._dims:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self._dims}")
            return mesh_dim
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a {self.ndim}-d mesh")
        return self._dims[mesh_dim]

    def get_coordinate_full(self) -> tuple:
        """This process's first device's position in the whole JAX mesh."""
        here = jax.local_devices(backend=self.jax_mesh.devices.flat[0].platform)
        grid = self.jax_mesh.devices
        for d in here:
            pos = np.argwhere(grid == d)
            if len(pos):
                return tuple(int(i) for i in pos[0])
        return None

    def get_coordinate(self):
        """This process's position along this mesh's dimensions (None when it holds no device
        of the mesh)."""
        full = self.get_coordinate_full()
        if full is None:
            return None
        names = self.jax_mesh.axis_names
        return tuple(full[names.index(n)] for n in self._dims)  # (PyTorch 2.13's: a tuple)

    def get_local_rank(self, mesh_dim: int | str | None = None) -> int:
        """This process's coordinate along `mesh_dim` (needed when the mesh has more than one
        dimension).
        """
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError("Optional kwarg `mesh_dim` needs to be specified when "
                                   "device_mesh.ndim > 1.")
            mesh_dim = 0
        name = self._name(mesh_dim)
        return self.get_coordinate()[self._dims.index(name)]

    def get_rank(self) -> int:
        """This process's global rank."""
        from . import _process_group
        if not _process_group.is_initialized():  # (PyTorch's init_device_mesh starts the
            return jax.process_index()           # default group; one process needs none)
        return _process_group.get_rank()

    def get_group(self, mesh_dim: int | str | None = None):
        """The process group along one dimension (a handle: collectives on it go through
        JAX; its size() and rank() are this dimension's)."""
        from ._process_group import MeshGroup
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError("Found the DeviceMesh have more than one dimension, please "
                                   "specify mesh_dim or use get_all_groups()")
            mesh_dim = 0
        return MeshGroup(self, self._name(mesh_dim))

    def get_all_groups(self) -> list:
        """One process group per mesh dimension."""
        return [self.get_group(i) for i in range(self.ndim)]

    # -- comparison, printing -------------------------------------------------------------------

    def _key(self):
        return (self.device_type, self._ids.tobytes(), self._ids.shape,
                self.jax_mesh.axis_names, self._dims)

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        # PyTorch 2.13's: the sizes (named), the device type and each dimension's stride in
        # the root mesh's row-major order of positions (none for a dimension of size 1)
        sizes = self.shape
        shown = (f"({', '.join(f'{n}={k}' for n, k in zip(self._dims, sizes))})" if self._named
                 else str(sizes))
        root = self.jax_mesh.axis_names
        strides = contiguous_strides(self._ids.shape)
        stride = tuple(strides[root.index(n)] if self.jax_mesh.shape[n] > 1 else ()
                       for n in self._dims)
        text = f"DeviceMesh({shown}, '{self.device_type}', stride={stride}"
        if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "") == "DETAIL":
            text += f", Mesh: {self.mesh.tolist()}"
        return text + ")"


def init_device_mesh(device_type: str, mesh_shape, *, mesh_dim_names=None,
                     backend_override=None) -> DeviceMesh:
    """A DeviceMesh of shape `mesh_shape` over the first prod(mesh_shape) devices of the
    type, in process order (all of them, across processes, as torchrun's ranks would be)."""
    if backend_override is not None:
        raise NotImplementedError("init_device_mesh(backend_override=) is not supported by "
                                  "torchjax: JAX's runtime is the only backend")
    shape = tuple(int(s) for s in mesh_shape)
    if mesh_dim_names is not None and len(mesh_dim_names) != len(shape):
        raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found "
                           f"len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):"
                           f"{len(shape)}.")
    n = math.prod(shape)
    available = len(_devices(device_type))
    if n > available:
        raise RuntimeError(
            f"init_device_mesh: a mesh of {shape} needs {n} {device_type} devices, JAX sees "
            f"{available} (for virtual CPU devices set XLA_FLAGS="
            f"--xla_force_host_platform_device_count={n} before jax is imported)")
    return DeviceMesh(device_type, np.arange(n).reshape(shape), mesh_dim_names=mesh_dim_names)
