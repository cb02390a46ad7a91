"""torchjax.save / torchjax.load against real torch.save / torch.load, and safetensors."""

import collections
import io
import os
import pickle
import struct
import zipfile
import zlib

import numpy as np
import pytest
import torch

import torchjax as tj
from torchjax.serialization import safetensors as st

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def torch_tensor(name, shape=(2, 3)):
    n = int(np.prod(shape))
    values = torch.arange(n, dtype=torch.float64).reshape(shape) * 1.5 - 2
    if name == "bool":
        return values > 0
    if name.startswith("complex"):
        return (values + 1j * (values + 0.5)).to(getattr(torch, name))
    if name.startswith("u"):
        return values.abs().to(torch.int64).to(getattr(torch, name))
    return values.to(getattr(torch, name))


def as_numpy(t):
    """Values of a torch or torchjax tensor as numpy (bfloat16 widened to float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    a = np.asarray(t._data)
    return a.astype(np.float32) if t.dtype == tj.bfloat16 else a


def assert_same(tt, jt):
    assert str(jt.dtype) == str(tt.dtype)
    assert tuple(jt.shape) == tuple(tt.shape)
    np.testing.assert_array_equal(as_numpy(jt), as_numpy(tt))


def tj_tensor(name, shape=(2, 3)):
    return tj.tensor(as_numpy(torch_tensor(name, shape)), dtype=getattr(tj, name))


def saved_by_torch(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def saved_by_torchjax(obj):
    buf = io.BytesIO()
    tj.save(obj, buf)
    buf.seek(0)
    return buf


def zip_of(pickled: bytes, extra=()):
    """A checkpoint archive around a hand-made data.pkl (for malicious or odd files)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickled)
        z.writestr("archive/version", "3\n")
        for name, data in extra:
            z.writestr(f"archive/{name}", data)
    buf.seek(0)
    return buf


# -- tensors of every dtype, both directions -----------------------------------------------


def test_torch_save_to_torchjax_load_every_dtype():
    obj = {name: torch_tensor(name) for name in DTYPES}
    obj["scalar"] = torch.tensor(2.5)
    obj["empty"] = torch.zeros(2, 0)
    loaded = tj.load(saved_by_torch(obj))
    assert list(loaded) == list(obj)
    for k, v in obj.items():
        assert isinstance(loaded[k], tj.Tensor)
        assert_same(v, loaded[k])


def test_torchjax_save_to_torch_load_every_dtype(tmp_path):
    obj = {name: tj_tensor(name) for name in DTYPES}
    obj["scalar"] = tj.tensor(2.5)
    obj["empty"] = tj.zeros(2, 0)
    tj.save(obj, tmp_path / "all.pt")
    loaded = torch.load(tmp_path / "all.pt")  # weights_only=True, torch's default
    for k, v in obj.items():
        assert_same(loaded[k], v)
    back = tj.load(str(tmp_path / "all.pt"))
    for k, v in obj.items():
        assert_same(loaded[k], back[k])


def test_same_bytes_as_torch_save(tmp_path):
    def make(lib):
        x = lib.arange(6.0)
        return {"x": x, "v": x[2:4], "p": lib.nn.Parameter(lib.ones(2)), "dt": lib.float16,
                "u16": lib.tensor([1, 2, 3], dtype=lib.uint16), "bf": lib.ones(3, dtype=lib.bfloat16),
                "e": lib.zeros(0), "s": lib.Size([2, 3]), "g": lib.ones(2, requires_grad=True) * 2}

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    torch.save(make(torch), tmp_path / "a" / "ckpt.pt")
    tj.save(make(tj), tmp_path / "b" / "ckpt.pt")
    files = []
    for d in "ab":
        data = (tmp_path / d / "ckpt.pt").read_bytes()
        serial = zipfile.ZipFile(io.BytesIO(data)).read("ckpt/.data/serialization_id")
        # the serialization id is random: mask it and its CRC
        data = data.replace(serial, b"0" * 40).replace(struct.pack("<I", zlib.crc32(serial)),
                                                       b"\0" * 4)
        files.append(data)
    assert files[0] == files[1]


def test_archive_folder_named_after_the_file(tmp_path):
    tj.save(tj.ones(1), tmp_path / "model.v2.pt")
    names = zipfile.ZipFile(tmp_path / "model.v2.pt").namelist()
    assert names[0] == "model.v2/data.pkl"
    assert names[-2:] == ["model.v2/version", "model.v2/.data/serialization_id"]
    assert zipfile.ZipFile(saved_by_torchjax(tj.ones(1))).namelist()[0] == "archive/data.pkl"


# -- storages shared by views --------------------------------------------------------------


def test_torch_views_load_as_shared_views():
    x = torch.arange(12.0).reshape(3, 4)
    loaded = tj.load(saved_by_torch({"x": x, "row": x[1], "col": x[:, 2], "t": x.t()}))
    for k, v in {"x": x, "row": x[1], "col": x[:, 2], "t": x.t()}.items():
        assert_same(v, loaded[k])
    loaded["row"][0] = 100.0  # written through one view, seen by the base and the others
    assert loaded["x"][1, 0].item() == 100.0
    assert loaded["t"][0, 1].item() == 100.0
    loaded["x"][2, 2] = -1.0
    assert loaded["col"][2].item() == -1.0


def test_torchjax_views_saved_on_one_storage():
    x = tj.arange(12.0).reshape(3, 4)
    loaded = torch.load(saved_by_torchjax({"x": x, "row": x[1], "t": x.t(), "d": x.detach()}))
    ptr = loaded["x"].untyped_storage().data_ptr()
    assert all(v.untyped_storage().data_ptr() == ptr for v in loaded.values())
    assert loaded["t"].stride() == (1, 4) and loaded["row"].storage_offset() == 4
    np.testing.assert_array_equal(loaded["t"].numpy(), np.asarray(x._data).T)


def test_view_sharing_survives_a_round_trip():
    x = tj.arange(6.0)
    back = tj.load(saved_by_torchjax([x, x[2:5]]))
    back[1][0] = 50.0
    assert back[0][2].item() == 50.0


# -- Parameters, modules, optimizers ---------------------------------------------------------


def test_parameters_both_directions():
    p = torch.nn.Parameter(torch.randn(2, 3))
    q = torch.nn.Parameter(torch.ones(2), requires_grad=False)
    a, b = tj.load(saved_by_torch([p, q]))
    assert type(a) is tj.nn.Parameter and a.requires_grad and not b.requires_grad
    assert_same(p, a)
    c, d = torch.load(saved_by_torchjax([a, b]))
    assert type(c) is torch.nn.Parameter and c.requires_grad and not d.requires_grad
    assert_same(c, a)


def test_model_state_dict_both_directions():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    jnet = tj.nn.Sequential(tj.nn.Linear(3, 4), tj.nn.ReLU(), tj.nn.Linear(4, 2))
    state = tj.load(saved_by_torch(net.state_dict()))
    assert type(state) is collections.OrderedDict and list(state) == list(net.state_dict())
    jnet.load_state_dict(state)
    x = torch.randn(2, 3)
    np.testing.assert_allclose(as_numpy(jnet(tj.tensor(x.numpy()))), net(x).detach().numpy(),
                               rtol=1e-6)
    # and back: torchjax's state_dict into a fresh torch model
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    fresh.load_state_dict(torch.load(saved_by_torchjax(jnet.state_dict())))
    np.testing.assert_allclose(fresh(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)


def test_optimizer_state_dict_both_directions():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(lin.parameters(), lr=0.1)
    lin(torch.randn(4, 3)).sum().backward()
    opt.step()
    state = tj.load(saved_by_torch(opt.state_dict()))
    assert state["param_groups"][0]["betas"] == (0.9, 0.999)
    assert state["param_groups"][0]["params"] == [0, 1]
    assert_same(opt.state_dict()["state"][0]["exp_avg"], state["state"][0]["exp_avg"])
    assert_same(opt.state_dict()["state"][1]["step"], state["state"][1]["step"])
    # a torchjax Adam resumes from it and takes the same next step as torch's
    jlin = tj.nn.Linear(3, 2)
    jlin.load_state_dict(tj.load(saved_by_torch(lin.state_dict())))
    jopt = tj.optim.Adam(jlin.parameters(), lr=0.1)
    jopt.load_state_dict(state)
    x = torch.randn(4, 3)
    for model, o, inp in ((lin, opt, x), (jlin, jopt, tj.tensor(x.numpy()))):
        o.zero_grad()
        model(inp).sum().backward()
        o.step()
    np.testing.assert_allclose(as_numpy(jlin.weight.detach()), lin.weight.detach().numpy(),
                               rtol=1e-5)
    # torchjax's optimizer state loads into torch's optimizer
    opt2 = torch.optim.Adam(lin.parameters(), lr=0.1)
    opt2.load_state_dict(torch.load(saved_by_torchjax(jopt.state_dict())))
    assert opt2.state_dict()["state"][0]["step"].item() == 2.0


def test_nested_containers_both_directions():
    def make(lib):
        return {"list": [1, 2.5, "s", None, True], "tuple": (lib.ones(2), (3, 4)),
                "od": collections.OrderedDict([("b", 1), ("a", lib.zeros(1))]),
                "set": {1, 2}, "complex": 1 + 2j, "bytes": b"ab", "nested": {"x": [{"y": 1.0}]},
                "dtype": lib.float64, "size": lib.Size([2, 3]), "device": lib.device("cpu")}

    for save_lib, load_lib, loader in ((torch, tj, tj.load), (tj, torch, torch.load)):
        buf = io.BytesIO()
        save_lib.save(make(save_lib), buf)
        buf.seek(0)
        got, want = loader(buf), make(load_lib)
        assert type(got["od"]) is collections.OrderedDict and list(got["od"]) == ["b", "a"]
        assert isinstance(got["tuple"], tuple) and got["tuple"][1] == (3, 4)
        for k in ("list", "set", "complex", "bytes", "nested", "dtype", "size", "device"):
            assert got[k] == want[k], k
        torch_side, tj_side = (got, want) if load_lib is torch else (want, got)
        assert_same(torch_side["tuple"][0], tj_side["tuple"][0])


def test_whole_torch_module_with_weights_only_false():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh())
    model = tj.load(saved_by_torch(net), weights_only=False)
    assert type(model) is tj.nn.Sequential and type(model[0].weight) is tj.nn.Parameter
    x = torch.randn(2, 3)
    np.testing.assert_allclose(as_numpy(model(tj.tensor(x.numpy())).detach()),
                               net(x).detach().numpy(), rtol=1e-6)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        tj.load(saved_by_torch(net))  # weights_only refuses the module's class


# -- weights-only safety ---------------------------------------------------------------------

CALLS = []


def record_call(*args):
    CALLS.append(args)
    return "called"


class CallsOnLoad:
    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def test_weights_only_refuses_globals_by_name():
    with pytest.raises(pickle.UnpicklingError,
                       match=r"Unsupported global: GLOBAL eval was not an allowed global"):
        tj.load(zip_of(pickle.dumps(CallsOnLoad(eval, "1 + 1"), protocol=2)))
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL posix.system whose module posix is "
                                                     r"blocked"):
        tj.load(zip_of(pickle.dumps(CallsOnLoad(os.system, "true"), protocol=2)))
    evil = zip_of(pickle.dumps({"w": CallsOnLoad(record_call, 1)}, protocol=2)).getvalue()
    name = f"{__name__}.record_call"
    with pytest.raises(pickle.UnpicklingError, match=rf"GLOBAL {name} was not an allowed "
                                                     rf"global.*add_safe_globals\(\[{name}\]\)"):
        tj.load(io.BytesIO(evil))
    assert CALLS == []  # refused before anything ran
    with tj.serialization.safe_globals([record_call]):
        assert tj.load(io.BytesIO(evil)) == {"w": "called"}
    assert tj.serialization.get_safe_globals() == []
    assert tj.load(io.BytesIO(evil), weights_only=False) == {"w": "called"}  # unsafe: runs it
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        tj.load(io.BytesIO(evil), pickle_module=pickle, weights_only=True)


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_weights_only_unsupported_torch_features_are_named():
    q = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)
    with pytest.raises(NotImplementedError, match="quantized tensors"):
        tj.load(saved_by_torch(q))


# -- broken files --------------------------------------------------------------------------


def test_truncated_and_corrupted_files(tmp_path):
    data = saved_by_torch({"w": torch.arange(100.0)}).getvalue()
    for cut in (len(data) // 2, len(data) - 5, 100):
        with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive.*"
                                               "corrupted or truncated"):
            tj.load(io.BytesIO(data[:cut]))
    flipped = bytearray(data)
    flipped[data.find(struct.pack("<f", 1.0)) + 4] ^= 0xFF  # one byte of tensor data
    with pytest.raises(RuntimeError, match="failed reading file data/0: Bad CRC-32"):
        tj.load(io.BytesIO(bytes(flipped)))
    (tmp_path / "cut.pt").write_bytes(data[:300])
    with pytest.raises(RuntimeError, match="failed reading zip archive"):
        tj.load(tmp_path / "cut.pt")
    with pytest.raises(EOFError, match="Ran out of input"):
        tj.load(io.BytesIO(b""))
    with pytest.raises(RuntimeError, match="Invalid magic number; corrupt file"):
        tj.load(io.BytesIO(b"not a checkpoint at all"))
    legacy = io.BytesIO()
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    with pytest.raises(NotImplementedError, match="legacy .non-zip. serialization format"):
        tj.load(legacy)
    short = zip_of(zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl"),
                   [("data/0", b"\0" * 8)])
    with pytest.raises(RuntimeError, match="data/0: the record has 8 bytes"):
        tj.load(short)


def test_big_endian_checkpoint():
    src = zipfile.ZipFile(saved_by_torch({"f": torch.tensor([1.5, -2.0]),
                                          "c": torch.tensor([1 + 2j])}))
    pkl = src.read("archive/data.pkl")
    f = np.frombuffer(src.read("archive/data/0"), "<f4").astype(">f4").tobytes()
    c = np.frombuffer(src.read("archive/data/1"), "<c8").astype(">c8").tobytes()
    got = tj.load(zip_of(pkl, [("byteorder", "big"), ("data/0", f), ("data/1", c)]))
    np.testing.assert_array_equal(as_numpy(got["f"]), [1.5, -2.0])
    np.testing.assert_array_equal(as_numpy(got["c"]), [1 + 2j])


# -- map_location, mmap, save arguments -------------------------------------------------------


def test_map_location_and_mmap(tmp_path):
    x = torch.arange(6.0)
    torch.save({"x": x, "v": x[1:3]}, tmp_path / "m.pt")
    seen = []
    for ml in ("cpu", tj.device("cpu"), {"cpu": "cpu"}, lambda s, loc: seen.append(loc)):
        assert_same(x[1:3], tj.load(tmp_path / "m.pt", map_location=ml)["v"])
    assert seen == ["cpu"]  # a callable is called once per storage
    got = tj.load(tmp_path / "m.pt", mmap=True)
    assert_same(x[1:3], got["v"])
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        tj.load(io.BytesIO((tmp_path / "m.pt").read_bytes()), mmap=True)
    if tj.cuda.device_count() == 0:
        with pytest.raises(RuntimeError, match="map_location=torch.device\\('cpu'\\)"):
            tj.load(tmp_path / "m.pt", map_location="cuda:0")
    with pytest.raises(RuntimeError, match="saved on device 'mps'"):
        tj.load(tmp_path / "m.pt", map_location="mps")


def test_save_arguments(tmp_path):
    with pytest.raises(NotImplementedError, match="_use_new_zipfile_serialization=False"):
        tj.save(tj.ones(1), tmp_path / "a.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(AttributeError, match="expected 'f' to be string, path, or a file-like"):
        tj.save(tj.ones(1), 3)
    with pytest.raises(RuntimeError, match="Parent directory .*missing does not exist"):
        tj.save(tj.ones(1), tmp_path / "missing" / "a.pt")
    with pytest.raises(Exception, match="pickle|lambda"):
        tj.save({"f": lambda: 1}, tmp_path / "b.pt")
    assert not (tmp_path / "b.pt").exists()  # nothing half-written
    buf = io.BytesIO()
    tj.save(tj.ones(2), buf, _disable_byteorder_record=True)
    assert "archive/byteorder" not in zipfile.ZipFile(buf).namelist()
    buf.seek(0)
    assert_same(torch.ones(2), torch.load(buf))


def test_zip64_records(monkeypatch, tmp_path):
    from torchjax._serialization import _zip
    monkeypatch.setattr(_zip, "ZIP64_LIMIT", 100)  # force the >4 GiB layout on small data
    x = tj.arange(200.0)
    tj.save({"x": x, "y": tj.ones(3)}, tmp_path / "z.pt")
    assert_same(torch.load(tmp_path / "z.pt")["x"], x)
    assert_same(torch.arange(200.0), tj.load(tmp_path / "z.pt", mmap=True)["x"])


# -- safetensors ---------------------------------------------------------------------------

ST_DTYPES = [d for d in DTYPES if d != "complex128"]


def test_safetensors_layout_matches_the_format():
    data = st.save({"attn.0": tj.arange(6.0).reshape(1, 2, 3)})
    header = b'{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}'
    header += b" " * (-len(header) % 8)
    values = struct.pack("<6f", 0, 1, 2, 3, 4, 5)
    assert data == struct.pack("<Q", len(header)) + header + values


def test_safetensors_round_trip(tmp_path):
    tensors = {name: tj_tensor(name) for name in ST_DTYPES}
    tensors["scalar"] = tj.tensor(3.0)
    tensors["empty"] = tj.zeros(0, 2)
    st.save_file(tensors, tmp_path / "t.safetensors", metadata={"k": "v"})
    for got in (tj.serialization.load_file(tmp_path / "t.safetensors"),
                st.load(st.save(tensors)), tj.load(tmp_path / "t.safetensors")):
        assert sorted(got) == sorted(tensors)
        for k, v in tensors.items():
            assert str(got[k].dtype) == str(v.dtype)
            np.testing.assert_array_equal(as_numpy(got[k]), as_numpy(v))


def test_safetensors_refusals(tmp_path):
    x = tj.arange(6.0).reshape(2, 3)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save({"a": x, "b": x[0]})
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": x.t()})
    with pytest.raises(ValueError, match="Expected a dict of \\[str, torch.Tensor\\]"):
        st.save([x])
    st.save({"row": x[1]})  # a contiguous view alone is fine
    data = st.save({"x": x})
    for bad, err in ((data[:-1], "not fully covered"), (data[:4], "header too small"),
                     (b"\xff" * 8 + data[8:], "header too large"),
                     (data[:8] + b"[" + data[9:], "header")):
        with pytest.raises(st.SafetensorError, match=err):
            st.load(bad)


def test_safetensors_interop_with_safetensors_torch(tmp_path):
    sft = pytest.importorskip("safetensors.torch")
    tensors = {name: torch_tensor(name) for name in ST_DTYPES}
    tensors["scalar"] = torch.tensor(3.0)
    tensors["empty"] = torch.zeros(0, 2)
    sft.save_file(tensors, tmp_path / "from_torch.safetensors", metadata={"k": "v"})
    got = tj.serialization.load_file(tmp_path / "from_torch.safetensors")
    for k, v in tensors.items():
        assert_same(v, got[k])
    st.save_file(got, tmp_path / "from_tj.safetensors", metadata={"k": "v"})
    back = sft.load_file(tmp_path / "from_tj.safetensors")
    for k, v in tensors.items():
        assert_same(back[k], got[k])
    # the same bytes as the reference writer, from files and in memory
    assert (tmp_path / "from_tj.safetensors").read_bytes() == \
        (tmp_path / "from_torch.safetensors").read_bytes()
    assert st.save(got) == sft.save(tensors)
    for k, v in st.load(sft.save(tensors)).items():
        assert_same(tensors[k], v)
