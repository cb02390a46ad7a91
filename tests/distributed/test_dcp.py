"""torch.distributed.checkpoint save / load in one process against PyTorch's own (its
no-process-group path): the flattened keys and what each holds, in-place loading (the
target's tensors keep their identity, other values are replaced), Stateful objects, errors
and warnings word for word, dtypes. Sharded state: checkpoint_script.py (8 devices) and
mp_checkpoint_script.py (2 processes)."""

import io
import warnings

import numpy as np
import pytest
import torch
import torch.distributed.checkpoint as pt_dcp

import torchjax
import torchjax.distributed.checkpoint as tj_dcp


def _state(lib, scale=1.0):
    """The same nested state dict in either library (scale 0: a target to load into)."""
    def t(a, dtype=np.float32):
        return lib.tensor(np.asarray(a, dtype=dtype) * scale)
    return {"model": {"w": t(np.arange(6).reshape(2, 3)), "b": t([1.0, 2.0])},
            "optim": {"state": {0: {"step": t(3.0), "exp_avg": t([0.5, 0.25])}},
                      "param_groups": [{"lr": 0.1 * scale, "params": [0]}]},
            "extra": {"epoch": int(4 * scale), "names": ["a", "b"] if scale else [],
                      "mixed": [t([7.0]), {"x": t([8.0])}]},
            "ints": t(np.arange(4), np.int64),
            "bio": io.BytesIO(b"raw" if scale else b"")}


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [str(w.message) for w in seen if "distributed" in str(w.message)]


def _plain(value):
    """A state dict's values as NumPy/Python, for comparing the two libraries."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, io.BytesIO):
        return ("BytesIO", value.getvalue())
    if hasattr(value, "numpy"):
        return value.numpy().tolist()
    return value


def test_metadata_keys_and_kinds_match_pytorch(tmp_path):
    want, pt_warn = _quiet(pt_dcp.save, _state(torch), checkpoint_id=tmp_path / "pt")
    got, tj_warn = _quiet(tj_dcp.save, _state(torchjax), checkpoint_id=tmp_path / "tj")
    assert pt_warn == tj_warn == ["torch.distributed is disabled, unavailable or "
                                  "uninitialized, assuming the intent is to save in a single "
                                  "process."]
    assert list(got.state_dict_metadata) == list(want.state_dict_metadata)
    for k, w in want.state_dict_metadata.items():
        g = got.state_dict_metadata[k]
        assert type(g).__name__ == type(w).__name__, k
        if hasattr(w, "size"):
            assert tuple(g.size) == tuple(w.size)
            assert str(g.properties.dtype) == str(w.properties.dtype)


def test_load_in_place_matches_pytorch(tmp_path):
    _quiet(pt_dcp.save, _state(torch), checkpoint_id=tmp_path / "pt")
    _quiet(tj_dcp.save, _state(torchjax), checkpoint_id=tmp_path / "tj")
    want, got = _state(torch, 0.0), _state(torchjax, 0.0)
    want_w, got_w = want["model"]["w"], got["model"]["w"]
    got_v = got_w._version
    _, pt_warn = _quiet(pt_dcp.load, want, checkpoint_id=tmp_path / "pt")
    _, tj_warn = _quiet(tj_dcp.load, got, checkpoint_id=tmp_path / "tj")
    assert pt_warn == tj_warn and "load in a single process" in tj_warn[0]
    assert _plain(got) == _plain(want)
    assert _plain(got)["extra"]["epoch"] == 4 and _plain(got)["model"]["b"] == [1.0, 2.0]
    # the tensors were written in place, as PyTorch's copy_ does
    assert want["model"]["w"] is want_w and got["model"]["w"] is got_w
    assert got_w._version > got_v
    assert list(got["optim"]["state"]) == [0]  # an int key stays an int


def test_stateful_objects_as_pytorch(tmp_path):
    class App:
        def __init__(self, lib):
            self.model = lib.nn.Linear(3, 2)
            self.loaded = None

        def state_dict(self):
            return {"model": self.model.state_dict(), "n": 5}

        def load_state_dict(self, sd):
            self.loaded = sd["n"]
            self.model.load_state_dict(sd["model"])

    torch.manual_seed(0)
    pt_app, tj_app = App(torch), App(torchjax)
    tj_app.model.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                                  for k, v in pt_app.model.state_dict().items()})
    _quiet(pt_dcp.save, {"app": pt_app, "m": pt_app.model}, checkpoint_id=tmp_path / "pt")
    _quiet(tj_dcp.save, {"app": tj_app, "m": tj_app.model}, checkpoint_id=tmp_path / "tj")
    pt_new, tj_new = App(torch), App(torchjax)
    pt_lin, tj_lin = torch.nn.Linear(3, 2), torchjax.nn.Linear(3, 2)
    _quiet(pt_dcp.load, {"app": pt_new, "m": pt_lin}, checkpoint_id=tmp_path / "pt")
    _quiet(tj_dcp.load, {"app": tj_new, "m": tj_lin}, checkpoint_id=tmp_path / "tj")
    assert tj_new.loaded == pt_new.loaded == 5
    for a, b in ((tj_new.model, pt_new.model), (tj_lin, pt_lin)):
        for (k, p), q in zip(a.named_parameters(), b.parameters()):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def _error(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001  (PyTorch's CheckpointException is one)
            return type(e).__name__, str(e)
    return None


def test_errors_match_pytorch(tmp_path):
    _quiet(pt_dcp.save, {"w": torch.zeros(2, 3)}, checkpoint_id=tmp_path / "pt")
    _quiet(tj_dcp.save, {"w": torchjax.zeros(2, 3)}, checkpoint_id=tmp_path / "tj")
    cases = [({"w": torch.zeros(2, 3), "v": torch.zeros(1)},
              {"w": torchjax.zeros(2, 3), "v": torchjax.zeros(1)}),   # missing key
             ({"w": torch.zeros(3, 3)}, {"w": torchjax.zeros(3, 3)})]  # size mismatch
    for want_sd, got_sd in cases:
        # PyTorch raises its planner's error inside a CheckpointException (with each rank's
        # traceback); torchjax raises the error itself
        want = _error(pt_dcp.load, want_sd, checkpoint_id=tmp_path / "pt")
        got = _error(tj_dcp.load, got_sd, checkpoint_id=tmp_path / "tj")
        assert want[0] == "CheckpointException" and f"{got[0]}: {got[1]}" in want[1], (got, want)
    assert _error(tj_dcp.load, {}) == _error(pt_dcp.load, {})  # no checkpoint_id
    assert _error(tj_dcp.save, {}) == _error(pt_dcp.save, {})
    # allow_partial_load: keys the checkpoint lacks keep their values
    sd = {"w": torchjax.ones(2, 3), "v": torchjax.ones(1)}
    _quiet(tj_dcp.load, sd, checkpoint_id=tmp_path / "tj",
           planner=tj_dcp.DefaultLoadPlanner(allow_partial_load=True))
    assert sd["w"].sum().item() == 0 and sd["v"].item() == 1
    # the same errors from PyTorch's own directory (test_dcp_pytorch_format.py reads it)
    for want_sd, got_sd in cases:
        pt_dir = _error(tj_dcp.load, got_sd, checkpoint_id=tmp_path / "pt")
        assert pt_dir == _error(tj_dcp.load, got_sd, checkpoint_id=tmp_path / "tj")
    with pytest.raises(NotImplementedError, match="async_save"):
        tj_dcp.async_save({}, checkpoint_id=tmp_path / "x")
    with pytest.raises(NotImplementedError, match="single_file_per_rank=False"):
        tj_dcp.FileSystemWriter(tmp_path / "x", single_file_per_rank=False)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64", "int64", "int8", "uint8",
                                   "bool", "complex64", "complex128"])
def test_every_dtype_round_trips(tmp_path, dtype):
    d = getattr(torchjax, dtype)
    x = torchjax.tensor(np.arange(-3, 9).reshape(3, 4) % 5 - 1).to(d)
    _quiet(tj_dcp.save, {"x": x, "s": x[0, 0].clone()}, checkpoint_id=tmp_path)
    sd = {"x": torchjax.zeros(3, 4, dtype=d), "s": torchjax.zeros((), dtype=d)}
    _quiet(tj_dcp.load, sd, checkpoint_id=tmp_path)
    assert sd["x"].dtype == d and sd["s"].shape == ()
    np.testing.assert_array_equal(sd["x"].numpy(), x.numpy())
    assert sd["s"].item() == x[0, 0].item()
