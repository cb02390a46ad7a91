"""PyTorch's own distributed-checkpoint directory (`.metadata` and `__0_0.distcp`), between
torchjax and PyTorch 2.13 in one process without a process group: torchjax's dcp.load reads
the directory PyTorch's dcp.save wrote, and PyTorch's dcp.load (and its dcp_to_torch_save)
reads the one torchjax writes with FileSystemWriter(serialization_format=TORCH_SAVE): the
same values as PyTorch's own round trip, a model and Adam resuming training as PyTorch's,
every dtype; what torchjax does not read is refused by name. 8 devices (a sharded model's
pieces): checkpoint_script.py."""

import io
import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.distributed.checkpoint as pt_dcp

import torchjax
import torchjax.distributed.checkpoint as tj_dcp
from tests.distributed.test_dcp import _plain, _state
from torchjax.distributed.checkpoint.filesystem import FileSystemWriter, SerializationFormat

DTYPES = ["bfloat16", "float16", "float32", "float64", "int64", "int32", "int8", "uint8",
          "bool", "complex64", "complex128"]


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _tj_save(sd, path):
    return _quiet(tj_dcp.save, sd, storage_writer=FileSystemWriter(
        path, serialization_format=SerializationFormat.TORCH_SAVE))


def test_torchjax_writes_pytorchs_files(tmp_path):
    _tj_save(_state(torchjax), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".metadata", "__0_0.distcp"]
    md = pickle.load(open(tmp_path / ".metadata", "rb"))  # PyTorch's classes, by plain pickle
    assert type(md) is pt_dcp.Metadata and md.version == "1.0.0"
    want = _quiet(pt_dcp.save, _state(torch), checkpoint_id=tmp_path / "pt")
    assert list(md.state_dict_metadata) == list(want.state_dict_metadata)
    for k, w in want.state_dict_metadata.items():
        assert repr(md.state_dict_metadata[k]) == repr(w), k
    assert md.planner_data == want.planner_data
    assert ({(i.fqn, i.offset) for i in md.storage_data}
            == {(i.fqn, i.offset) for i in want.storage_data})


@pytest.mark.parametrize("saver,loader", [("pytorch", "torchjax"), ("torchjax", "pytorch"),
                                          ("torchjax", "torchjax")])
def test_load_matches_pytorchs_own_round_trip(tmp_path, saver, loader):
    _quiet(pt_dcp.save, _state(torch), checkpoint_id=tmp_path / "ref")
    want = _state(torch, 0.0)
    _quiet(pt_dcp.load, want, checkpoint_id=tmp_path / "ref")
    if saver == "pytorch":
        _quiet(pt_dcp.save, _state(torch), checkpoint_id=tmp_path / "ck")
    else:
        _tj_save(_state(torchjax), tmp_path / "ck")
    lib, dcp = (torch, pt_dcp) if loader == "pytorch" else (torchjax, tj_dcp)
    got = _state(lib, 0.0)
    w = got["model"]["w"]
    _quiet(dcp.load, got, checkpoint_id=tmp_path / "ck")
    assert _plain(got) == _plain(want)
    assert got["model"]["w"] is w  # in place
    assert list(got["optim"]["state"]) == [0]


def _net(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def _steps(model, opt, lib, n, x, y):
    for _ in range(n):
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def _copy_into(tj_model, pt_model):
    tj_model.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                              for k, v in pt_model.state_dict().items()})


def _resumed(lib, load, get, set_, path, x, y):
    """(model, optimizer, epoch): a fresh model and Adam of `lib` loading the checkpoint at
    `path` through get_state_dict / dcp.load / set_state_dict, then 2 more steps."""
    model = _net(lib)
    opt = lib.optim.Adam(model.parameters(), lr=0.05)
    msd, osd = get(model, opt)
    sd = {"model": msd, "optim": osd, "epoch": 0}
    _quiet(load, sd, checkpoint_id=path)
    set_(model, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    _steps(model, opt, lib, 2, x, y)
    return model, opt, sd["epoch"]


@pytest.mark.parametrize("direction", ["pytorch_to_torchjax", "torchjax_to_pytorch"])
def test_model_and_adam_resume_as_pytorch(tmp_path, direction):
    """2 Adam steps, a checkpoint (get_state_dict's FQN keys, an epoch), a fresh model and
    optimizer loading it, 2 more steps: the parameters of PyTorch never interrupted."""
    from torch.distributed.checkpoint.state_dict import get_state_dict as pt_get
    from torch.distributed.checkpoint.state_dict import set_state_dict as pt_set

    from torchjax.distributed.checkpoint.state_dict import get_state_dict as tj_get
    from torchjax.distributed.checkpoint.state_dict import set_state_dict as tj_set
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((6, 4), np.float32), rng.integers(0, 3, 6)
    torch.manual_seed(0)
    pt_model = _net(torch)
    pt_opt = torch.optim.Adam(pt_model.parameters(), lr=0.05)
    tj_model = _net(torchjax)
    _copy_into(tj_model, pt_model)
    tj_opt = torchjax.optim.Adam(tj_model.parameters(), lr=0.05)
    px, py = torch.tensor(xs), torch.tensor(ys)
    tx, ty = torchjax.tensor(xs), torchjax.tensor(ys)
    _steps(pt_model, pt_opt, torch, 2, px, py)
    _steps(tj_model, tj_opt, torchjax, 2, tx, ty)
    if direction == "pytorch_to_torchjax":
        msd, osd = pt_get(pt_model, pt_opt)
        _quiet(pt_dcp.save, {"model": msd, "optim": osd, "epoch": 2}, checkpoint_id=tmp_path)
        model, opt, epoch = _resumed(torchjax, tj_dcp.load, tj_get, tj_set, tmp_path, tx, ty)
    else:
        msd, osd = tj_get(tj_model, tj_opt)
        _tj_save({"model": msd, "optim": osd, "epoch": 2}, tmp_path)
        model, opt, epoch = _resumed(torch, pt_dcp.load, pt_get, pt_set, tmp_path, px, py)
    assert epoch == 2
    _steps(pt_model, pt_opt, torch, 2, px, py)
    for (k, p), q in zip(model.named_parameters(), pt_model.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=k)
    assert float(opt.state_dict()["state"][0]["step"]) == 4.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("direction", ["pytorch_to_torchjax", "torchjax_to_pytorch"])
def test_every_dtype_between_the_libraries(tmp_path, dtype, direction):
    values = (np.arange(-3, 9).reshape(3, 4) % 5 - 1).astype(np.float32)
    if direction == "pytorch_to_torchjax":
        x = torch.tensor(values).to(getattr(torch, dtype))
        _quiet(pt_dcp.save, {"x": x, "s": x[0, 1].clone()}, checkpoint_id=tmp_path)
        d = getattr(torchjax, dtype)
        sd = {"x": torchjax.zeros(3, 4, dtype=d), "s": torchjax.zeros((), dtype=d)}
        _quiet(tj_dcp.load, sd, checkpoint_id=tmp_path)
    else:
        x = torchjax.tensor(values).to(getattr(torchjax, dtype))
        _tj_save({"x": x, "s": x[0, 1].clone()}, tmp_path)
        d = getattr(torch, dtype)
        sd = {"x": torch.zeros(3, 4, dtype=d), "s": torch.zeros((), dtype=d)}
        _quiet(pt_dcp.load, sd, checkpoint_id=tmp_path)
    assert str(sd["x"].dtype) == f"torch.{dtype}" and tuple(sd["s"].shape) == ()
    # (PyTorch has no NumPy bfloat16: compare as float32, which holds every bfloat16)
    def values_of(t):
        return (t.float() if dtype == "bfloat16" else t).numpy()
    np.testing.assert_array_equal(values_of(sd["x"]), values_of(x))
    assert sd["s"].item() == x[0, 1].item()


def test_dcp_to_torch_save_reads_torchjaxs_directory(tmp_path):
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    _tj_save(_state(torchjax), tmp_path / "ck")
    dcp_to_torch_save(tmp_path / "ck", tmp_path / "full.pt")
    got = torch.load(tmp_path / "full.pt", weights_only=False)
    assert _plain(got) == _plain(_state(torch))


def test_what_torchjax_does_not_read_is_refused(tmp_path):
    with pytest.raises(NotImplementedError, match="SerializationFormat.SAFETENSORS"):
        FileSystemWriter(tmp_path, serialization_format=SerializationFormat.SAFETENSORS)
    # a stream-transform extension PyTorch applied to an item (compression): named
    _quiet(pt_dcp.save, {"w": torch.ones(2)}, checkpoint_id=tmp_path / "ext")
    md = pickle.load(open(tmp_path / "ext" / ".metadata", "rb"))
    for info in md.storage_data.values():
        info.transform_descriptors = ["zstd"]
    pickle.dump(md, open(tmp_path / "ext" / ".metadata", "wb"))
    with pytest.raises(NotImplementedError, match=r"extensions \['zstd'\]"):
        _quiet(tj_dcp.load, {"w": torchjax.zeros(2)}, checkpoint_id=tmp_path / "ext")
    # a .metadata naming anything but PyTorch's checkpoint classes is refused, not run
    (tmp_path / "bad").mkdir()
    hostile = b"cos\nsystem\n(S'touch " + str(tmp_path / "ran").encode() + b"'\ntR."
    (tmp_path / "bad" / ".metadata").write_bytes(hostile)
    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        _quiet(tj_dcp.load, {"w": torchjax.zeros(2)}, checkpoint_id=tmp_path / "bad")
    assert not (tmp_path / "ran").exists()
    # a truncated .distcp file
    _quiet(pt_dcp.save, {"w": torch.ones(2)}, checkpoint_id=tmp_path / "cut")
    data = (tmp_path / "cut" / "__0_0.distcp").read_bytes()
    (tmp_path / "cut" / "__0_0.distcp").write_bytes(data[:len(data) // 2])
    with pytest.raises(RuntimeError, match="incomplete"):
        _quiet(tj_dcp.load, {"w": torchjax.zeros(2)}, checkpoint_id=tmp_path / "cut")


def test_a_bytesio_and_objects_both_ways(tmp_path):
    _tj_save({"b": io.BytesIO(b"\x00raw"), "s": "text", "n": [1, 2]}, tmp_path / "tj")
    sd = {"b": io.BytesIO(), "s": "", "n": []}
    _quiet(pt_dcp.load, sd, checkpoint_id=tmp_path / "tj")
    assert sd["b"].getvalue() == b"\x00raw" and sd["s"] == "text" and sd["n"] == [1, 2]
    _quiet(pt_dcp.save, {"b": io.BytesIO(b"\x00raw"), "s": "text"}, checkpoint_id=tmp_path / "pt")
    sd = {"b": io.BytesIO(), "s": ""}
    _quiet(tj_dcp.load, sd, checkpoint_id=tmp_path / "pt")
    assert sd["b"].getvalue() == b"\x00raw" and sd["s"] == "text"


@pytest.fixture(scope="module")
def pytorch_fsdp_checkpoint(tmp_path_factory):
    """(directory, rank 0's results) of a 2-process PyTorch FSDP job's dcp.save."""
    import json
    import os
    import subprocess
    import sys
    path = tmp_path_factory.mktemp("pytorch_fsdp") / "ck"
    script = os.path.join(os.path.dirname(__file__), "pytorch_fsdp_job.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE",
                                                                    "MASTER_", "LOCAL_"))}
    env["OMP_NUM_THREADS"] = "1"  # (two ranks beside the suite's workers on a small machine)
    for _ in range(3):  # (PyTorch's own gloo job has aborted in loaded full runs: again)
        done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                               "--nproc-per-node", "2", script, str(path)], env=env,
                              capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            break
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return path, json.loads(line[len("RESULT "):])


def test_a_two_rank_pytorch_fsdp_checkpoint_loads_into_one_process(pytorch_fsdp_checkpoint):
    """PyTorch's FSDP2 job of 2 ranks wrote each rank's rows of every weight and moment into
    its own .distcp file; torchjax's dcp.load puts both halves together into a plain model
    and Adam (get_state_dict / set_state_dict), the full values PyTorch's ranks held."""
    from torchjax.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
    path, want = pytorch_fsdp_checkpoint
    assert want["files"] == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    md = pickle.load(open(path / ".metadata", "rb"))
    assert len(md.state_dict_metadata["model.0.weight"].chunks) == 2
    nn = torchjax.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))  # (the job's)
    opt = torchjax.optim.Adam(model.parameters(), lr=0.1)
    msd, osd = get_state_dict(model, opt)
    sd = {"model": msd, "optim": osd, "epoch": 0}
    _quiet(tj_dcp.load, sd, checkpoint_id=path)
    set_state_dict(model, opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    assert sd["epoch"] == 2
    for name, p in model.named_parameters():
        np.testing.assert_array_equal(p.detach().numpy(), np.float32(want["params"][name]))
        np.testing.assert_array_equal(opt.state[p]["exp_avg"].numpy(),
                                      np.float32(want["exp_avg"][name]))
        assert float(opt.state[p]["step"]) == 2.0


def test_metadata_of_large_files_and_unicode_keys():
    """The .metadata pickle torchjax writes opcode by opcode holds offsets past 2**31 (files of
    several GB), non-ASCII keys and many chunks as PyTorch's unpickler reads them."""
    from torchjax.distributed.checkpoint import _distcp
    big = 3 * 2 ** 31 + 5
    pieces = [{"file": "__0_0.distcp", "key": [big + 100 * k, 100], "offsets": [k, 0],
               "sizes": [1, 4]} for k in range(300)]  # (past pickle's 256 short memo slots)
    entries = {"modèle.w": {"kind": "tensor", "torch_dtype": "bfloat16", "shape": [300, 4],
                            "pieces": pieces},
               "epoch": {"kind": "object", "file": "__1_0.distcp", "key": [big, 7]}}
    md = pickle.loads(_distcp.metadata_pickle(entries, {"modèle.w": ("modèle", "w"),
                                                        "epoch": ("epoch",)}))
    meta = md.state_dict_metadata["modèle.w"]
    assert meta.properties.dtype is torch.bfloat16 and tuple(meta.size) == (300, 4)
    assert [tuple(c.offsets) for c in meta.chunks] == [(k, 0) for k in range(300)]
    where = {(i.fqn, None if i.offset is None else tuple(i.offset)): v
             for i, v in md.storage_data.items()}
    assert where[("modèle.w", (299, 0))].offset == big + 29900
    assert where[("epoch", None)].relative_path == "__1_0.distcp"
    assert where[("epoch", None)].offset == big and where[("epoch", None)].length == 7
    assert md.planner_data == {"modèle.w": ("modèle", "w"), "epoch": ("epoch",)}


@pytest.mark.parametrize("layout", ["pytorch", "torchjax", "torchjax_torch_save"])
def test_dcp_to_torch_save_as_pytorchs(tmp_path, layout):
    """format_utils.dcp_to_torch_save of a directory of either layout gives the file PyTorch's
    gives for PyTorch's directory of the same state: the nested state dict, whole tensors,
    objects (PyTorch's torch.load reads both files)."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save as pt_convert

    from torchjax.distributed.checkpoint.format_utils import dcp_to_torch_save
    _quiet(pt_dcp.save, _state(torch), checkpoint_id=tmp_path / "pt")
    pt_convert(tmp_path / "pt", tmp_path / "want.pt")
    if layout == "pytorch":
        source = tmp_path / "pt"
    elif layout == "torchjax":
        _quiet(tj_dcp.save, _state(torchjax), checkpoint_id=tmp_path / "tj")
        source = tmp_path / "tj"
    else:
        _tj_save(_state(torchjax), tmp_path / "tj")
        source = tmp_path / "tj"
    dcp_to_torch_save(source, tmp_path / "got.pt")
    want = torch.load(tmp_path / "want.pt", weights_only=False)
    got = torch.load(tmp_path / "got.pt", weights_only=False)
    assert _plain(got) == _plain(want)
    assert _plain(torchjax.load(tmp_path / "got.pt", weights_only=False)) == _plain(want)


def test_torch_save_to_dcp_loads_back(tmp_path):
    """format_utils.torch_save_to_dcp of PyTorch's torch.save file: a directory dcp.load
    reads into the state dict (PyTorch's own conversion's, loaded by PyTorch, as the
    oracle); quiet, as PyTorch's."""
    from torch.distributed.checkpoint.format_utils import torch_save_to_dcp as pt_convert

    from torchjax.distributed.checkpoint.format_utils import torch_save_to_dcp
    torch.save(_state(torch), tmp_path / "sd.pt")
    pt_convert(tmp_path / "sd.pt", tmp_path / "pt")
    want = _state(torch, 0.0)
    _quiet(pt_dcp.load, want, checkpoint_id=tmp_path / "pt")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch_save_to_dcp(tmp_path / "sd.pt", tmp_path / "tj")
    got = _state(torchjax, 0.0)
    _quiet(tj_dcp.load, got, checkpoint_id=tmp_path / "tj")
    assert _plain(got) == _plain(want)
