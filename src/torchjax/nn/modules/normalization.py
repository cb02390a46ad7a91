"""Normalization layers: BatchNorm1d/2d/3d, SyncBatchNorm, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm,
LocalResponseNorm and RMSNorm, with PyTorch's parameters, buffers, errors and repr."""

from __future__ import annotations

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"]

import numbers
import warnings

from ... import _creation, _dtypes
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _register_affine(module, shape, affine, bias, dtype, device) -> None:
    """weight (and bias unless bias=False) of `shape` when affine, else both None."""
    if affine:
        module.weight = Parameter(_creation.empty(shape, dtype=dtype, device=device))
        if bias:
            module.bias = Parameter(_creation.empty(shape, dtype=dtype, device=device))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module, affine) -> None:
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class _NormBase(Module):
    """Per-channel affine parameters and running statistics shared by batch and instance norm."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, num_features, affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean",
                                 _creation.zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var",
                                 _creation.ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked",
                                 _creation.tensor(0, dtype=_dtypes.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Resets the running mean to zeros, the running variance to ones and the batch count to
        zero (if running stats are tracked).
        """
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Resets the running statistics and re-initializes the affine weight (ones) and bias
        (zeros).
        """
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


def _dims_error(allowed: tuple, got: int) -> ValueError:
    want = " or ".join(f"{d}D" for d in allowed)
    return ValueError(f"expected {want} input (got {got}D input)")


class _BatchNorm(_NormBase):
    _dims: tuple = ()

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._dims:
            raise _dims_error(self._dims, input.dim())

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        # in training, batch statistics; in eval too when there are no running statistics
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        # statistics that are not tracked must not be updated
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input."""

    _dims = (5,)


# torchjax.distributed's SyncBatchNorm forward in a job of several processes (statistics
# all-reduced over the process group; None where plain batch statistics already are the
# global ones): distributed/_sync_batchnorm.py
ACROSS_PROCESSES = [None]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation with statistics over the whole global batch.

    Under DistributedDataParallel or fully_shard on a mesh, the batch a module sees is the
    global batch (sharded over the devices), so plain batch statistics already are the
    synchronised ones: XLA reduces them across the devices."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        """Applies the SyncBatchNorm layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        hook = ACROSS_PROCESSES[0]
        if self.training and hook is not None:
            out = hook(self, input)
            if out is not None:
                return out
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d replaced by a SyncBatchNorm holding the same
        parameters and running statistics (the module itself when it is one)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                setattr(out, name, getattr(module, name))
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _InstanceNorm(_NormBase):
    _dims: tuple = ()  # (unbatched, batched) input dims

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._dims:
            raise _dims_error(self._dims, input.dim())

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = self._dims[0]
        feature_dim = input.dim() - unbatched
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        if input.dim() == unbatched:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input."""

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input."""

    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input."""

    _dims = (4, 5)


def _as_shape(normalized_shape) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalisation over the trailing normalized_shape dims with elementwise affine."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initializes LayerNorm's parameters in place, with the same scheme used at
        construction (random draws use torchjax's global generator).
        """
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input):
        """Applies the LayerNorm layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings LayerNorm shows inside its `repr`, such as its sizes and flags."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalisation over groups of channels with a per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, num_channels, affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initializes GroupNorm's parameters in place, with the same scheme used at
        construction (random draws use torchjax's global generator).
        """
        _reset_affine(self, self.affine)

    def forward(self, input):
        """Applies the GroupNorm layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings GroupNorm shows inside its `repr`, such as its sizes and flags."""
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Normalisation by the mean square over neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        """Applies the LocalResponseNorm layer to `input` (see the class description). Call the
        module (`m(x)`), not `forward`, so hooks run.
        """
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The settings LocalResponseNorm shows inside its `repr`, such as its sizes and flags."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing dims with an elementwise scale."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, dtype=dtype,
                                                    device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initializes RMSNorm's parameters in place, with the same scheme used at construction
        (the weight is refilled with ones).
        """
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        """Applies the RMSNorm layer to `x` (see the class description). Call the module (`m(x)`),
        not `forward`, so hooks run.
        """
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The settings RMSNorm shows inside its `repr`, such as its sizes and flags."""
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
