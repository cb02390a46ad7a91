"""torchjax: PyTorch's user API (Tensor, autograd, nn, optim) running on JAX and XLA.

    import torchjax as torch
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + 1
    y.backward()
    print(x.grad)  # tensor(7.)
"""

import jax as _jax

# 64-bit types (int64 indices, float64) are PyTorch's defaults for many results; every array
# torchjax makes passes an explicit dtype, so the defaults stay PyTorch's.
_jax.config.update("jax_enable_x64", True)

# Eager mode runs many tiny XLA programs. On the CPU backend JAX hands each one to a worker
# thread, and on small tensors that hand-off costs more than the program itself (about 2x on
# a 16x16 forward+backward, bench/bench_eager.py), so run them inline. It changes no result;
# TORCHJAX_CPU_ASYNC_DISPATCH=1 keeps JAX's default. Other backends are not affected.
import os as _os  # noqa: E402

if _os.environ.get("TORCHJAX_CPU_ASYNC_DISPATCH", "0") != "1":
    try:
        _jax.config.update("jax_cpu_enable_async_dispatch", False)
    except AttributeError:  # a JAX without the option: its default dispatch is kept
        pass

from . import _dtypes  # noqa: E402
from ._dtypes import (  # noqa: E402,F401
    bfloat16,
    bool,
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
    uint16,
    uint32,
    uint64,
)

half = float16
float = float32  # noqa: A001
double = float64
short = int16
int = int32  # noqa: A001
long = int64
cfloat = complex64
cdouble = complex128

from . import (
    _dispatch,  # noqa: E402
    _ops,  # noqa: E402  (registers the op table)
)
from ._autograd.anomaly import (  # noqa: E402
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
)
from ._autograd.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from ._creation import (  # noqa: E402
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from ._device import device  # noqa: E402
from ._random import (  # noqa: E402
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._tensor import Size, Tensor, is_tensor  # noqa: E402

_dispatch.install(globals())
_dispatch.install_functions(globals())

from . import _inplace_random  # noqa: E402

_inplace_random.install()

from ._sampling import *  # noqa: E402,F403
from ._typeinfo import *  # noqa: E402,F403

from . import autograd, cuda, fft, interop, linalg, nn, optim, special, testing, utils  # noqa: E402,I001
from . import func  # noqa: E402
from . import distributions  # noqa: E402
from . import compiler, _dynamo  # noqa: E402
from .compiler import compile  # noqa: E402
from ._printing import get_printoptions, set_printoptions  # noqa: E402
from .serialization import load, save  # noqa: E402
from . import amp, backends, distributed, hub, jit, multiprocessing, onnx, overrides, profiler, random, types, version  # noqa: E402
from ._install import _package_getattr as __getattr__, install_as_torch  # noqa: E402
from .amp import autocast  # noqa: E402


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:
    return input.is_complex()


def result_type(tensor1, tensor2) -> dtype:
    return _dtypes.result_type_of((tensor1, tensor2))


def can_cast(from_, to) -> bool:
    return _dtypes.can_cast(from_, to)


from .version import __version__  # noqa: E402
