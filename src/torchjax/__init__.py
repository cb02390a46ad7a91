"""torchjax: PyTorch's user API (Tensor, autograd, nn, optim) running on JAX and XLA.

    import torchjax as torch
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x + 3 * x + 1
    y.backward()
    print(x.grad)  # tensor(7.)
"""

import jax as _jax

# 64-bit types (int64 indices, float64) are PyTorch's defaults for many results, so torchjax
# needs JAX's x64 mode; it is not set for the process here but turned on around torchjax's
# own work (_x64.py), so the user's own JAX code keeps JAX's defaults.

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

# XLA:CPU's buffers are host memory from malloc: its thresholds are set so that they are
# reused from step to step rather than mapped and faulted in again (_malloc_tune.py)
from ._malloc_tune import tune as _tune_malloc  # noqa: E402

_tune_malloc()

# Compiled programs are kept on disk for the next process, and compile work is counted
# (torchjax.compile_stats, TORCHJAX_LOGS=compiles): _compile_cache.py, _compile_stats.py.
from . import _compile_cache  # noqa: E402

_compile_cache.configure(_jax)
from ._compile_stats import compile_stats  # noqa: E402

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
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
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
    _generate,  # noqa: E402
    _ops,  # noqa: E402  (registers the op table)
)
from ._autograd.anomaly import (  # noqa: E402
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
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
    empty_strided,
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
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from ._creation import asarray  # noqa: E402
from ._creation import range as range  # noqa: E402,A004
from ._device import device, get_default_device, set_default_device  # noqa: E402
from ._settings import *  # noqa: E402,F403
from ._legacy_types import set_default_tensor_type, tensortype  # noqa: E402
from ._legacy_types import CPU as _LEGACY_TYPES  # noqa: E402

globals().update(_LEGACY_TYPES)  # torch.FloatTensor, torch.LongTensor, ...
from ._layout import (  # noqa: E402
    _mkldnn,
    jagged,
    layout,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from ._memory_format import (  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
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

_generate.install(globals())
_generate.install_functions(globals())
from . import _deprecated_overloads  # noqa: E402

_deprecated_overloads.install(globals())

from . import _inplace_random  # noqa: E402

_inplace_random.install()

from ._sampling import *  # noqa: E402,F403
from ._typeinfo import *  # noqa: E402,F403

from . import autograd, cuda, fft, interop, linalg, nn, optim, special, testing, utils  # noqa: E402,I001
from . import func  # noqa: E402
from . import distributions  # noqa: E402
from . import compiler, _dynamo  # noqa: E402
from . import sparse  # noqa: E402
from .sparse import sparse_coo_tensor, spmm  # noqa: E402
from .compiler import compile  # noqa: E402
from .nn.modules.module import _typename as typename  # noqa: E402
from .func import vmap  # noqa: E402
from ._printing import get_printoptions, set_printoptions  # noqa: E402
from .serialization import load, save  # noqa: E402
from . import accelerator, amp, backends, distributed, hub, jit, multiprocessing, onnx, overrides, profiler, random, types, version  # noqa: E402
from ._install import _package_getattr as __getattr__, install_as_torch  # noqa: E402
from .amp import autocast  # noqa: E402
from .amp._state import *  # noqa: E402,F403
from . import cpu  # noqa: E402
from ._torch_nn_forms import *  # noqa: E402,F403
from ._torch_method_forms import *  # noqa: E402,F403
from ._windows import *  # noqa: E402,F403
from ._unravel_index import unravel_index  # noqa: E402
from ._frombuffer import frombuffer  # noqa: E402
from ._removed_linalg import *  # noqa: E402,F403
from ._stft import istft, stft  # noqa: E402
from ._platform import *  # noqa: E402,F403
from ._empty_layouts import empty_permuted  # noqa: E402
from ._gradient import gradient  # noqa: E402
from ._sym import *  # noqa: E402,F403
from ._dlpack import from_dlpack, to_dlpack  # noqa: E402
from .jit import fork, wait  # noqa: E402  (torch.fork / torch.wait are torch.jit's)
from ._control_flow import cond, while_loop  # noqa: E402
from ._resize import resize_as_  # noqa: E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402
from ._from_file import from_file  # noqa: E402
# the non-op public names of torch: constants, build flags, dtypes without values, classes
from ._constants import *  # noqa: E402,F403
from ._build_flags import *  # noqa: E402,F403
from ._dtypes_storage_only import *  # noqa: E402,F403
from ._qscheme import *  # noqa: E402,F403
from ._errors import AcceleratorError, OutOfMemoryError  # noqa: E402
from ._sym_types import SymBool, SymFloat, SymInt  # noqa: E402
from ._streams import Event, Stream  # noqa: E402
from . import _grad_dtype  # noqa: E402,F401  (Tensor.grad_dtype)
from . import _subclass  # noqa: E402,F401  (Tensor.as_subclass)
from .amp import GradScaler  # noqa: E402
from . import storage, torch_version  # noqa: E402
from .storage import Storage, StorageBase, TypedStorage, UntypedStorage  # noqa: E402

globals().update(storage.LEGACY)  # torch.FloatStorage, torch.LongStorage, ...
from . import _tensor_storage  # noqa: E402,F401  (Tensor.untyped_storage, Tensor.storage)
from ._tensor_rebind import as_strided_  # noqa: E402  (and Tensor.set_, is_set_to)
from ._memory_format import contiguous_format as legacy_contiguous_format  # noqa: E402
from .signal import windows  # noqa: E402  (PyTorch's torch.windows is torch.signal.windows)

from ._torch_function_guards import *  # noqa: E402,F403
from ._strided_copy import as_strided_copy  # noqa: E402
from ._lobpcg import lobpcg  # noqa: E402

TYPE_CHECKING = False


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

from ._gc_freeze import freeze_import as _freeze_import  # noqa: E402

_freeze_import()  # (last: what the import made is permanent, see _gc_freeze.py)
