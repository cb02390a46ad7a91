"""The public names of `torch` that are not ops: constants, build flags, dtypes, classes,
errors and submodules, each against PyTorch 2.13 (values, types, reprs, isinstance answers),
and the list of dir(torch)'s names torchjax deliberately lacks (ALLOWED_MISSING below)."""

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


def test_torch_version_module():
    assert isinstance(torchjax.__version__, torchjax.torch_version.TorchVersion)
    assert isinstance(torch.__version__, torch.torch_version.TorchVersion)
    assert torchjax.torch_version.TorchVersion("2.13.0") >= (2, 1)
