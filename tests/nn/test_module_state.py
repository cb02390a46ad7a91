"""nn.Module's state_dict and load_state_dict against PyTorch: keys, values and metadata,
messages, all-or-nothing loading, copy and assign, hooks and extra state."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchjax

from ._module_common import LIBS, copy_weights, make_net, same_error

# -- state dicts ------------------------------------------------------------------------------

def test_state_dict_keys_values_and_metadata():
    tm, jm = make_net(torch), make_net(torchjax)
    copy_weights(tm, jm)
    tsd, jsd = tm.state_dict(), jm.state_dict()
    assert list(jsd) == list(tsd)
    for k in tsd:
        np.testing.assert_array_equal(jsd[k].numpy(), tsd[k].numpy())
        assert not jsd[k].requires_grad
    assert dict(jsd._metadata) == dict(tsd._metadata)
    kept = jm.state_dict(keep_vars=True)
    assert kept["scale"] is jm.scale and kept["scale"].requires_grad
    assert list(jm.state_dict(prefix="net.")) == list(tm.state_dict(prefix="net."))
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        assert list(jm.state_dict(OrderedDict(), "p.")) == ["p." + k for k in tsd]


def test_load_state_dict_results_and_messages():
    for lib in LIBS:
        m = lib.nn.Linear(2, 3)
        res = m.load_state_dict(m.state_dict())
        assert repr(res) == "<All keys matched successfully>"
    results = []
    for lib in LIBS:
        m = lib.nn.Linear(2, 3)
        sd = {"weight": lib.zeros(3, 2), "extra": lib.zeros(1)}
        res = m.load_state_dict(sd, strict=False)
        results.append((repr(res), res.missing_keys, res.unexpected_keys,
                        m.weight.detach().numpy().tolist()))
    assert results[0] == results[1]

    def bad_load(lib):
        m = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.ReLU())
        m.load_state_dict({"0.weight": lib.zeros(3, 4), "0.other": lib.zeros(1)})
    same_error(bad_load)
    same_error(lambda lib: lib.nn.Linear(2, 3).load_state_dict(
        {"weight": lib.zeros(2, 2), "bias": lib.zeros(3)}, strict=False))
    same_error(lambda lib: lib.nn.Linear(2, 3).load_state_dict(
        {"weight": np.zeros((3, 2)), "bias": lib.zeros(3)}))
    same_error(lambda lib: lib.nn.Linear(2, 3).load_state_dict([("weight", lib.zeros(3, 2))]))


def test_load_state_dict_is_all_or_nothing():
    m = torchjax.nn.Sequential(torchjax.nn.Linear(2, 2), torchjax.nn.Linear(2, 3))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    bad = {k: torchjax.zeros(v.shape) for k, v in before.items()}
    bad["1.weight"] = torchjax.zeros(4, 4)
    with pytest.raises(RuntimeError, match=r"size mismatch for 1.weight: copying a param with "
                                           r"shape torch.Size\(\[4, 4\]\) from checkpoint"):
        m.load_state_dict(bad)
    del bad["1.weight"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "1.weight"'):
        m.load_state_dict(bad, assign=True)
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())
    assert isinstance(m[0].weight, torchjax.nn.Parameter)


def test_load_state_dict_copy_and_assign():
    m = torchjax.nn.Linear(2, 3)
    w = m.weight
    m.load_state_dict({"weight": torchjax.ones(3, 2, dtype=torchjax.float64),
                       "bias": torchjax.ones(3)})
    assert m.weight is w and w.dtype == torchjax.float32 and w._version > 0
    src = torchjax.full((3, 2), 2.0)
    m.load_state_dict({"weight": src, "bias": torchjax.ones(3)}, assign=True)
    assert m.weight is not w and isinstance(m.weight, torchjax.nn.Parameter)
    assert m.weight.requires_grad and float(m.weight.sum()) == 12.0
    # a 1-element checkpoint entry loads into a 0-d parameter
    for lib in LIBS:
        mm = lib.nn.Module()
        mm.p = lib.nn.Parameter(lib.tensor(0.0))
        mm.load_state_dict({"p": lib.tensor([5.0])})
        assert mm.p.shape == () and float(mm.p.detach()) == 5.0


def test_state_dict_and_load_hooks():
    def run(lib):
        calls = []
        m = lib.nn.Linear(2, 2)
        m.register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre", prefix)))

        def post(mod, sd, prefix, meta):
            sd[prefix + "note"] = lib.ones(1)
        m.register_state_dict_post_hook(post)
        keys = list(m.state_dict(prefix="x."))
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: calls.append(("load_pre", sorted(sd))))

        def forgive(mod, incompatible):
            calls.append(("load_post", list(incompatible.unexpected_keys)))
            incompatible.unexpected_keys.clear()
        handle = m.register_load_state_dict_post_hook(forgive)
        m.load_state_dict({**m.state_dict(), "extra": lib.ones(1)})
        handle.remove()
        return calls, keys
    assert run(torchjax) == run(torch)
    same_error(lambda lib: lib.nn.Linear(1, 1).register_load_state_dict_post_hook(
        lambda m, k: 1).remove() or _load_with_bad_post_hook(lib))


def _load_with_bad_post_hook(lib):
    m = lib.nn.Linear(1, 1)
    m.register_load_state_dict_post_hook(lambda mod, keys: 1)
    m.load_state_dict(m.state_dict())


def test_extra_state_round_trip():
    def make(lib):
        class WithExtra(lib.nn.Linear):
            def get_extra_state(self):
                return {"n": 7}

            def set_extra_state(self, state):
                self.loaded = state
        return WithExtra(2, 2)
    tm, jm = make(torch), make(torchjax)
    assert list(jm.state_dict()) == list(tm.state_dict()) == ["weight", "bias", "_extra_state"]
    jm.load_state_dict(jm.state_dict())
    assert jm.loaded == {"n": 7}
    same_error(lambda lib: lib.nn.Linear(1, 1).load_state_dict(
        {"weight": lib.ones(1, 1), "bias": lib.ones(1), "_extra_state": 1}))
