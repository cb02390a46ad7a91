"""The public names of `torch` that are not ops: constants, build flags, dtypes, classes,
errors and storages, each against PyTorch 2.13 (values, types, reprs, isinstance answers), and
the list of dir(torch)'s names torchjax deliberately lacks (ALLOWED_MISSING below). The
functions and submodules added with them: test_torch_name_modules.py."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import torchjax

# ---------------------------------------------------------------- constants and flags


@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constants_are_pytorchs_python_values(name):
    ours, theirs = getattr(torchjax, name), getattr(torch, name)
    assert type(ours) is type(theirs)
    if isinstance(theirs, float) and math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert ours == theirs


def test_newaxis_indexes_as_in_pytorch():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = torchjax.tensor(a)[:, torchjax.newaxis]
    want = torch.tensor(a)[:, torch.newaxis]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_build_flags_are_bools_true_where_torchjax_has_the_feature():
    for name in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
        assert type(getattr(torchjax, name)) is type(getattr(torch, name)) is bool
    # the feature each flag guards: linalg and fft exist, MKL and OpenMP are not used
    assert torchjax.has_lapack and torchjax.has_spectral
    assert torchjax.has_mkl is torchjax.backends.mkl.is_available()
    assert torchjax.has_openmp is torchjax.backends.openmp.is_available()


# ---------------------------------------------------------------- dtypes without values

STORAGE_ONLY = ["complex32", "chalf", "float4_e2m1fn_x2", "bit", "qint8", "quint8", "qint32",
                "quint4x2", "quint2x4", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2"]
STORAGE_ONLY += [f"int{n}" for n in range(1, 8)] + [f"uint{n}" for n in range(1, 8)]


def _flag(d, attr):
    try:
        return getattr(d, attr)
    except RuntimeError as e:
        return ("raises", str(e))


@pytest.mark.parametrize("name", STORAGE_ONLY)
def test_storage_only_dtype_matches_pytorch(name):
    ours, theirs = getattr(torchjax, name), getattr(torch, name)
    assert repr(ours) == repr(theirs)
    assert isinstance(ours, torchjax.dtype)
    for attr in ("is_floating_point", "is_complex", "is_signed", "itemsize"):
        assert _flag(ours, attr) == _flag(theirs, attr), attr
    assert pickle.loads(pickle.dumps(ours)) is ours


def test_dtype_aliases_are_the_same_objects_as_in_pytorch():
    for a, b in (("chalf", "complex32"), ("bit", "uint1")):
        assert (getattr(torchjax, a) is getattr(torchjax, b)) == \
            (getattr(torch, a) is getattr(torch, b))
    assert torchjax.bits8 is not torchjax.uint8


@pytest.mark.parametrize("name,why", [("complex32", "complex32"), ("int4", "sub-byte"),
                                      ("uint1", "sub-byte"), ("bits8", "bits"),
                                      ("float4_e2m1fn_x2", "float4"), ("qint8", "quantized")])
def test_tensor_of_a_storage_only_dtype_raises_naming_it(name, why):
    d = getattr(torchjax, name)
    for make in (lambda: torchjax.zeros(2, dtype=d), lambda: torchjax.tensor([1.0], dtype=d),
                 lambda: torchjax.ones(2).to(d), lambda: torchjax.promote_types(d, d)):
        with pytest.raises(TypeError, match=rf"torch\.{name} tensors are not supported.*{why}"):
            make()


# ---------------------------------------------------------------- classes and errors


@pytest.mark.parametrize("name", ["OutOfMemoryError", "AcceleratorError"])
def test_errors_are_runtime_errors_as_in_pytorch(name):
    ours, theirs = getattr(torchjax, name), getattr(torch, name)
    assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]
    assert repr(ours) == repr(theirs)
    with pytest.raises(RuntimeError, match="boom"):
        raise ours("boom")
    assert (torchjax.cuda.OutOfMemoryError is torchjax.OutOfMemoryError) == \
        (torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)


def test_grad_scaler_is_amps():
    assert (torchjax.GradScaler is torchjax.amp.GradScaler) == \
        (torch.GradScaler is torch.amp.GradScaler)


@pytest.mark.parametrize("name", ["SymInt", "SymFloat", "SymBool"])
def test_sym_classes_answer_isinstance_as_pytorch(name):
    ours, theirs = getattr(torchjax, name), getattr(torch, name)
    assert repr(ours) == repr(theirs)
    for value in (3, 2.5, True, 0):
        assert isinstance(value, ours) == isinstance(value, theirs)
    assert (torchjax.types.SymInt is torchjax.SymInt) == (torch.types.SymInt is torch.SymInt)
    assert torchjax.types.py_sym_types == (torchjax.SymInt, torchjax.SymFloat, torchjax.SymBool)
    # a size is a plain int, never symbolic
    assert not isinstance(torchjax.zeros(3).shape[0], ours)
    with pytest.raises(RuntimeError, match=f"torch.{name} is not supported by torchjax"):
        ours(None)


@pytest.mark.parametrize("name", ["Stream", "Event"])
def test_stream_and_event_exist_and_making_one_raises(name):
    ours = getattr(torchjax, name)
    assert repr(ours) == repr(getattr(torch, name))
    assert not isinstance(object(), ours)
    with pytest.raises(RuntimeError, match=f"torch.{name} is not supported by torchjax"):
        ours()


LEGACY_STORAGES = ["BFloat16Storage", "BoolStorage", "ByteStorage", "CharStorage",
                   "ComplexDoubleStorage", "ComplexFloatStorage", "DoubleStorage",
                   "FloatStorage", "HalfStorage", "IntStorage", "LongStorage", "ShortStorage",
                   "QInt32Storage", "QInt8Storage", "QUInt2x4Storage", "QUInt4x2Storage",
                   "QUInt8Storage"]


@pytest.mark.parametrize("name", LEGACY_STORAGES)
def test_legacy_storage_classes_as_in_pytorch(name):
    ours, theirs = getattr(torchjax, name), getattr(torch, name)
    assert repr(ours) == repr(theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that TypedStorage is deprecated
        assert repr(ours.dtype) == repr(theirs.dtype)
    assert issubclass(ours, torchjax.TypedStorage)
    assert issubclass(theirs, torch.TypedStorage)
    with pytest.raises(RuntimeError, match=f"torch.{name} is not supported by torchjax"):
        ours()


def test_storage_names_and_is_storage():
    assert (torchjax.Storage is torchjax.FloatStorage) == (torch.Storage is torch.FloatStorage)
    for name in ("TypedStorage", "UntypedStorage"):
        assert getattr(torchjax, name) is getattr(torchjax.storage, name)
        assert getattr(torch, name) is getattr(torch.storage, name)
    assert issubclass(torchjax.UntypedStorage, torchjax.StorageBase)
    assert issubclass(torch.UntypedStorage, torch.StorageBase)
    t = torchjax.zeros(2)
    assert not isinstance(t, (torchjax.TypedStorage, torchjax.UntypedStorage))
    assert torchjax.is_storage(t) is torch.is_storage(torch.zeros(2)) is False
    with pytest.raises(RuntimeError, match="torch.UntypedStorage is not supported by torchjax"):
        torchjax.UntypedStorage(4)


def _storage_facts(lib):
    """What code reads from storages: sharing (equal pointers), sizes, devices, types."""
    a = lib.arange(6.0)
    views = [a, a[2:], a.view(2, 3).t(), a.detach()]
    other, empty = lib.zeros(6), lib.zeros(0)
    s = a.untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated (tested below)
        typed = a[2:].storage()
    return {
        "shared": [v.untyped_storage().data_ptr() == s.data_ptr() for v in views],
        "at data_ptr": s.data_ptr() == a.data_ptr(),
        "other": other.untyped_storage().data_ptr() == s.data_ptr(),
        "sizes": (s.nbytes(), s.size(), len(s), s.element_size(), str(s.device)),
        "empty": (empty.untyped_storage().data_ptr(), empty.untyped_storage().nbytes()),
        "typed": (repr(typed.dtype), typed.size(), len(typed), typed.nbytes(),
                  typed.element_size(), typed.data_ptr() == a.data_ptr(),
                  typed.untyped().data_ptr() == s.data_ptr()),
        "classes": (type(s).__name__, type(typed).__name__, lib.is_storage(s),
                    lib.is_storage(typed), isinstance(s, lib.UntypedStorage),
                    isinstance(typed, lib.TypedStorage)),
    }


def test_tensor_storages_describe_sharing_as_pytorchs():
    assert _storage_facts(torchjax) == _storage_facts(torch)
    a = torchjax.zeros(3)
    ptr = a.untyped_storage().data_ptr()
    a.add_(1)  # a new JAX buffer, the same storage as far as PyTorch's code can tell
    assert a.untyped_storage().data_ptr() == ptr
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        a.storage()


def test_torch_version_module():
    assert isinstance(torchjax.__version__, torchjax.torch_version.TorchVersion)
    assert isinstance(torch.__version__, torch.torch_version.TorchVersion)
    assert torchjax.torch_version.TorchVersion("2.13.0") >= (2, 1)


def test_small_aliases_as_in_pytorch():
    assert torchjax.TYPE_CHECKING is torch.TYPE_CHECKING is False
    assert (torchjax.legacy_contiguous_format is torchjax.contiguous_format) == \
        (torch.legacy_contiguous_format is torch.contiguous_format)
    assert (torchjax.windows is torchjax.signal.windows) == (torch.windows is torch.signal.windows)


@pytest.mark.parametrize("name", ["DisableTorchFunction", "DisableTorchFunctionSubclass"])
def test_torch_function_guards_are_context_managers(name):
    for lib in (torch, torchjax):
        with getattr(lib, name)():
            assert lib.add(lib.ones(2), 1).sum().item() == 4.0
    assert not issubclass(torchjax.DisableTorchFunction, torchjax.DisableTorchFunctionSubclass)


# ---------------------------------------------------------------- what torchjax lacks, on purpose

# dir(torch)'s public names torchjax does not have, by reason (tools/coverage.py prints these
# groups in docs/coverage.md). A name leaving dir(torchjax) fails the test below, and so does a
# name here that torchjax now has (take it off the list) or PyTorch no longer has.
ALLOWED_MISSING = {
    "modules PyTorch's __init__ merely imports; real code imports them itself": [
        "builtins", "ctypes", "functools", "glob", "importlib", "inspect", "math", "os",
        "platform", "sys", "textwrap", "threading", "torch", "warnings"],
    "TorchScript / JIT internals (torchjax.jit returns code unchanged; there is no IR)": [
        "AggregationType", "AliasDb", "AnyType", "Argument", "ArgumentSpec", "AVG", "AwaitType",
        "Block", "BoolType", "BufferDict", "CallStack", "Capsule", "ClassType", "Code",
        "CompilationUnit", "CompleteArgumentSpec", "ComplexType", "ConcreteModuleType",
        "ConcreteModuleTypeBuilder", "DeepCopyMemoTable", "DeviceObjType", "DictType",
        "EnumType", "ErrorReport", "ExecutionPlan", "FileCheck", "FloatType", "FunctionSchema",
        "Future", "FutureType", "Gradient", "Graph", "GraphExecutorState", "IODescriptor",
        "InferredType", "IntType", "InterfaceType", "JITException", "ListType",
        "LiteScriptModule", "LockingLogger", "LoggerBase", "ModuleDict", "Node", "NoneType",
        "NoopLogger", "NumberType", "OperatorInfo", "OptionalType", "ParameterDict",
        "PyObjectType", "RRefType", "SUM", "ScriptClass", "ScriptClassFunction", "ScriptDict",
        "ScriptDictIterator", "ScriptDictKeyIterator", "ScriptFunction", "ScriptList",
        "ScriptListIterator", "ScriptMethod", "ScriptModule", "ScriptModuleSerializer",
        "ScriptObject", "ScriptObjectProperty", "StaticModule", "StreamObjType", "StringType",
        "SymBoolType", "SymIntType", "TensorType", "TracingState", "TupleType", "Type",
        "UnionType", "Use", "Value", "import_ir_module", "import_ir_module_from_buffer",
        "merge_type_from_type_comment", "parse_ir", "parse_schema", "parse_type_comment",
        "unify_type_list"],
    "PyTorch's C++ dispatcher, serializer and benchmark internals": [
        "BenchmarkConfig", "BenchmarkExecutionStats", "DeserializationStorageContext",
        "DispatchKey", "DispatchKeySet", "ExcludeDispatchKeyGuard", "FatalError",
        "PyTorchFileReader", "PyTorchFileWriter", "SerializationStorageContext", "Tag",
        "ThroughputBenchmark"],
    "build and process internals of PyTorch's package": [
        "PRIVATE_OPS", "USE_GLOBAL_DEPS", "USE_RTLD_GLOBAL_WITH_LIBTORCH", "classproperty",
        "get_file_path", "prepare_multiprocessing_environment",
        "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12", "thread_safe_generator"],
    "vendor kernels XLA replaces (cuDNN, MIOpen, oneDNN, FBGEMM, CUDA SyncBatchNorm)": [
        "batch_norm_backward_elemt", "batch_norm_backward_reduce", "batch_norm_elemt",
        "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "batch_norm_stats",
        "batch_norm_update_stats", "cudnn_affine_grid_generator", "cudnn_batch_norm",
        "cudnn_convolution", "cudnn_convolution_add_relu", "cudnn_convolution_relu",
        "cudnn_convolution_transpose", "cudnn_grid_sampler", "cudnn_is_acceptable",
        "fbgemm_linear_fp16_weight", "fbgemm_linear_fp16_weight_fp32_activation",
        "fbgemm_linear_int8_weight", "fbgemm_linear_int8_weight_fp32_activation",
        "fbgemm_linear_quantize_weight", "fbgemm_pack_gemm_matrix_fp16",
        "fbgemm_pack_quantized_matrix", "miopen_batch_norm", "miopen_convolution",
        "miopen_convolution_add_relu", "miopen_convolution_relu",
        "miopen_convolution_transpose", "miopen_ctc_loss", "miopen_depthwise_convolution",
        "miopen_rnn", "mkldnn_adaptive_avg_pool2d", "mkldnn_convolution",
        "mkldnn_linear_backward_weights", "mkldnn_max_pool2d", "mkldnn_max_pool3d",
        "mkldnn_rnn_layer"],
    "quantized-tensor kernels and fused observers (quantized tensors are not supported: "
    "torch.quantize_per_tensor & co. raise saying so; fake quantization is there)": [
        "choose_qparams_optimized", "fused_moving_avg_obs_fake_quant",
        "quantized_batch_norm", "quantized_gru", "quantized_gru_cell", "quantized_lstm",
        "quantized_lstm_cell", "quantized_max_pool1d", "quantized_max_pool2d",
        "quantized_max_pool3d", "quantized_rnn_relu_cell", "quantized_rnn_tanh_cell"],
    "sparse compressed layouts (CSR/CSC/BSR/BSC), sparse-only kernels and sparse-result "
    "products, not implemented": [
        "dsmm", "hsmm", "hspmm", "native_norm", "resize_as_sparse_", "saddmm", "smm",
        "sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor",
        "sparse_csc_tensor", "sparse_csr_tensor", "sspaddmm"],
}
# names another change is adding: their arrival must not fail this test
BEING_BUILT: set = set()


def torch_names_torchjax_lacks() -> set:
    # dir(torch) of a fresh process: a submodule another test imported (torch.numa, by
    # torch.distributed's) is an attribute of torch from then on
    import json
    import subprocess
    import sys
    out = subprocess.run(
        [sys.executable, "-c", "import json, torch; print(json.dumps(dir(torch)))"],
        capture_output=True, text=True, check=True, timeout=300).stdout
    names = json.loads(out.strip().splitlines()[-1])
    return {n for n in names if not n.startswith("_") and not hasattr(torchjax, n)}


def test_names_torchjax_lacks_are_the_documented_ones():
    allowed = [n for names in ALLOWED_MISSING.values() for n in names]
    assert len(allowed) == len(set(allowed)), "a name is listed twice"
    missing = torch_names_torchjax_lacks()
    assert sorted(missing - set(allowed)) == [], "torchjax lost these names of torch"
    assert sorted(set(allowed) - missing - BEING_BUILT) == [], \
        "torchjax has these now (or PyTorch dropped them): take them off ALLOWED_MISSING"


SCRIPT = """
import torch
import torch.nested
from torch.signal.windows import hann
from torch.return_types import max as max_type
from torch.functional import einsum
from torch.storage import UntypedStorage
assert torch.__name__ == "torchjax", torch
assert isinstance(torch.max(torch.ones(2, 2), 1), max_type)
assert einsum is torch.einsum and hann(4).shape == (4,)
assert torch.zeros(2).untyped_storage().__class__ is UntypedStorage is torch.UntypedStorage
try:
    torch.nested.nested_tensor
except AttributeError as e:
    print(e)
try:
    import torch.ao.quantization
except ModuleNotFoundError as e:
    print(e)
print(torch.pi, torch.newaxis, torch.complex32, torch.FloatStorage.dtype)
"""


def test_new_names_under_python_m_torchjax(tmp_path):
    import os
    import subprocess
    import sys
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    script = tmp_path / "names.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "torchjax", str(script)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("torch.nested.nested_tensor is not supported by torchjax: ")
    assert lines[1].startswith("torch.ao.quantization is not supported by torchjax")
    assert lines[2] == f"{math.pi} None torch.complex32 torch.float32"
