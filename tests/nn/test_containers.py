"""Sequential, ModuleList, ModuleDict, ParameterList and ParameterDict against PyTorch: the same
operations give the same children names, types, lengths, reprs, state_dict keys and errors."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)


def both(fn):
    """fn(lib) gives equal results in both libraries (exceptions: same type and message)."""
    out = []
    for lib in LIBS:
        try:
            out.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out.append((type(e), str(e)))
    assert out[1] == out[0]
    return out[0]


def layers(lib):
    nn = lib.nn
    return [nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 2), nn.Tanh()]


def describe(m):
    return repr(m), [n for n, _ in m.named_modules()], list(m.state_dict())


# -- Sequential -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    "index", "negative", "slice", "slice_step", "len", "iter", "append", "insert",
    "insert_negative", "extend", "pop", "pop_slice", "delitem", "delitem_slice", "setitem",
    "add", "iadd", "mul", "rmul", "imul", "ordered_dict", "index_error", "insert_error",
    "add_error", "mul_error", "setitem_error", "insert_type_error",
])
def test_sequential(op):
    def fn(lib):
        nn = lib.nn
        s = nn.Sequential(*layers(lib))
        res = {
            "index": lambda: type(s[1]).__name__,
            "negative": lambda: repr(s[-1]),
            "slice": lambda: describe(s[1:3]),
            "slice_step": lambda: describe(s[::-2]),
            "len": lambda: len(s),
            "iter": lambda: [type(m).__name__ for m in s],
            "append": lambda: describe(s.append(nn.Sigmoid())),
            "insert": lambda: describe(s.insert(1, nn.Sigmoid())),
            "insert_negative": lambda: describe(s.insert(-1, nn.Sigmoid())),
            "extend": lambda: describe(s.extend([nn.Sigmoid(), nn.ReLU()])),
            "pop": lambda: (repr(s.pop(1)), describe(s)),
            "pop_slice": lambda: (repr(s.pop(slice(0, 2))), describe(s)),
            "delitem": lambda: (s.__delitem__(-2), describe(s)),
            "delitem_slice": lambda: (s.__delitem__(slice(None, None, 2)), describe(s)),
            "setitem": lambda: (s.__setitem__(-1, nn.Sigmoid()), describe(s)),
            "add": lambda: describe(s + nn.Sequential(nn.ReLU())),
            "iadd": lambda: _iadd(s, nn.Sequential(nn.ReLU())),
            "mul": lambda: describe(s[:2] * 2),
            "rmul": lambda: describe(2 * s[:2]),
            "imul": lambda: _imul(s[:2], 3),
            "ordered_dict": lambda: describe(nn.Sequential(OrderedDict(
                [("conv", nn.Linear(1, 1)), ("act", nn.ReLU())]))),
            "index_error": lambda: s[4],
            "insert_error": lambda: s.insert(6, nn.ReLU()),
            "add_error": lambda: s + [nn.ReLU()],
            "mul_error": lambda: s * 0,
            "setitem_error": lambda: s.__setitem__(-5, nn.ReLU()),
            "insert_type_error": lambda: s.insert(0, 3),
        }[op]()
        return res
    both(fn)


def _iadd(s, other):
    s += other
    return describe(s)


def _imul(s, n):
    s *= n
    return describe(s)


def test_sequential_forward_and_slicing_shares_modules():
    s = torchjax.nn.Sequential(*layers(torchjax))
    assert s[1:][0] is s[1] and type(s[:2]) is torchjax.nn.Sequential
    x = torchjax.ones(4, 2)
    np.testing.assert_allclose(s(x).detach().numpy(), s[2:](s[:2](x)).detach().numpy())
    assert not any(k.isdigit() for k in dir(s))


# -- ModuleList -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    "index", "negative", "slice", "len", "append", "extend", "insert", "iadd", "add",
    "delitem", "delitem_slice", "setitem", "pop", "repr_runs", "empty", "index_error",
    "extend_error",
])
def test_module_list(op):
    def fn(lib):
        nn = lib.nn
        ml = nn.ModuleList(layers(lib))
        return {
            "index": lambda: repr(ml[0]),
            "negative": lambda: repr(ml[-2]),
            "slice": lambda: describe(ml[1:]),
            "len": lambda: len(ml),
            "append": lambda: describe(ml.append(nn.ReLU())),
            "extend": lambda: describe(ml.extend([nn.ReLU(), nn.ReLU()])),
            "insert": lambda: (ml.insert(1, nn.Sigmoid()), describe(ml)),
            "iadd": lambda: _iadd(ml, [nn.ReLU()]),
            "add": lambda: describe(ml + nn.ModuleList([nn.ReLU()])),
            "delitem": lambda: (ml.__delitem__(1), describe(ml)),
            "delitem_slice": lambda: (ml.__delitem__(slice(1, 3)), describe(ml)),
            "setitem": lambda: (ml.__setitem__(0, nn.Sigmoid()), describe(ml)),
            "pop": lambda: (repr(ml.pop(-1)), describe(ml)),
            "repr_runs": lambda: repr(nn.ModuleList(
                [nn.ReLU(), nn.ReLU(), nn.Linear(1, 2), nn.Linear(1, 2), nn.Linear(1, 2),
                 nn.ReLU(), nn.Sequential(nn.ReLU(), nn.ReLU())])),
            "empty": lambda: repr(nn.ModuleList()),
            "index_error": lambda: ml[-5],
            "extend_error": lambda: ml.extend(3),
        }[op]()
    both(fn)


# -- ModuleDict -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    "keys", "items", "values", "getitem", "contains", "len", "iter", "pop", "delitem", "clear",
    "update_dict", "update_pairs", "update_moduledict", "setitem", "repr", "missing",
    "update_error", "update_pair_error", "update_length_error",
])
def test_module_dict(op):
    def fn(lib):
        nn = lib.nn
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Linear(1, 2)})
        return {
            "keys": lambda: list(md.keys()),
            "items": lambda: [(k, repr(v)) for k, v in md.items()],
            "values": lambda: [repr(v) for v in md.values()],
            "getitem": lambda: repr(md["a"]),
            "contains": lambda: ("a" in md, "z" in md),
            "len": lambda: len(md),
            "iter": lambda: list(md),
            "pop": lambda: (repr(md.pop("b")), describe(md)),
            "delitem": lambda: (md.__delitem__("a"), describe(md)),
            "clear": lambda: (md.clear(), describe(md)),
            "update_dict": lambda: (md.update({"z": nn.Tanh(), "b": nn.Sigmoid()}),
                                    describe(md)),
            "update_pairs": lambda: (md.update([("c", nn.Tanh()), ("d", nn.ReLU())]),
                                     describe(md)),
            "update_moduledict": lambda: (md.update(nn.ModuleDict({"q": nn.ReLU()})),
                                          describe(md)),
            "setitem": lambda: (md.__setitem__("new", nn.Tanh()), describe(md)),
            "repr": lambda: describe(md),
            "missing": lambda: md["nothing"],
            "update_error": lambda: md.update(3),
            "update_pair_error": lambda: md.update([3]),
            "update_length_error": lambda: md.update([("a", nn.ReLU(), 1)]),
        }[op]()
    both(fn)


# -- ParameterList / ParameterDict ------------------------------------------------------------

def _plist(lib):
    return lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(4),
                                 lib.nn.Parameter(lib.ones(1), requires_grad=False)])


@pytest.mark.parametrize("op", [
    "repr", "types", "names", "slice", "negative", "append", "extend", "iadd", "setitem",
    "object", "state_dict", "index_error", "call", "extend_error",
])
def test_parameter_list(op):
    def fn(lib):
        pl = _plist(lib)
        return {
            "repr": lambda: repr(pl),
            "types": lambda: [(type(p).__name__, p.requires_grad) for p in pl],
            "names": lambda: [n for n, _ in pl.named_parameters()],
            "slice": lambda: repr(pl[1:]),
            "negative": lambda: tuple(pl[-1].shape),
            "append": lambda: repr(pl.append(lib.ones(5, dtype=lib.float64))),
            "extend": lambda: repr(pl.extend([lib.ones(1), lib.ones(2)])),
            "iadd": lambda: _iadd(pl, [lib.ones(3)]),
            "setitem": lambda: (pl.__setitem__(0, lib.zeros(1)), repr(pl), len(pl)),
            "object": lambda: repr(pl.append("text")),
            "state_dict": lambda: list(pl.state_dict()),
            "index_error": lambda: pl[3],
            "call": lambda: pl(1),
            "extend_error": lambda: pl.extend(lib.ones(2)),
        }[op]()
    both(fn)


def _pdict(lib):
    return lib.nn.ParameterDict({"w": lib.ones(2, 2), "b": lib.nn.Parameter(lib.zeros(3)),
                                 "a": lib.nn.Parameter(lib.ones(1), requires_grad=False)})


@pytest.mark.parametrize("op", [
    "repr", "keys", "values", "items", "ordered", "setitem", "delitem", "pop", "popitem",
    "get", "setdefault", "copy", "fromkeys", "clear", "update_pairs", "contains", "reversed",
    "or", "ior", "object", "state_dict", "key_type", "missing", "call",
])
def test_parameter_dict(op):
    def fn(lib):
        pd = _pdict(lib)
        return {
            "repr": lambda: repr(pd),
            "keys": lambda: list(pd.keys()),
            "values": lambda: [(type(v).__name__, v.requires_grad) for v in pd.values()],
            "items": lambda: [(k, tuple(v.shape)) for k, v in pd.items()],
            "ordered": lambda: list(lib.nn.ParameterDict(OrderedDict(
                [("z", lib.ones(1)), ("a", lib.ones(1))])).keys()),
            "setitem": lambda: (pd.__setitem__("new", lib.ones(4)), repr(pd)),
            "delitem": lambda: (pd.__delitem__("w"), repr(pd)),
            "pop": lambda: (tuple(pd.pop("b").shape), list(pd)),
            "popitem": lambda: (pd.popitem()[0], list(pd)),
            "get": lambda: (tuple(pd.get("w").shape), pd.get("none", 5)),
            "setdefault": lambda: (tuple(pd.setdefault("s", lib.ones(7)).shape),
                                   tuple(pd.setdefault("w").shape)),
            "copy": lambda: repr(pd.copy()),
            "fromkeys": lambda: repr(pd.fromkeys(["x", "y"], lib.ones(1))),
            "clear": lambda: (pd.clear(), len(pd), repr(pd)),
            "update_pairs": lambda: (pd.update([("q", lib.ones(1))]), list(pd)),
            "contains": lambda: ("w" in pd, "q" in pd),
            "reversed": lambda: list(reversed(pd)),
            "or": lambda: repr(pd | lib.nn.ParameterDict({"o": lib.ones(1)})),
            "ior": lambda: _ior(pd, lib.nn.ParameterDict({"o": lib.ones(1)})),
            "object": lambda: (pd.__setitem__("note", 3), repr(pd)),
            "state_dict": lambda: list(pd.state_dict()),
            "key_type": lambda: pd[3],
            "missing": lambda: pd["nothing"],
            "call": lambda: pd(1),
        }[op]()
    both(fn)


def _ior(pd, other):
    pd |= other
    return repr(pd)


def test_containers_in_a_model_train_together():
    """A model of containers: same state_dict keys and gradients as PyTorch."""
    def make(lib):
        nn = lib.nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
                self.heads = nn.ModuleDict({"out": nn.Linear(2, 1)})
                self.scales = nn.ParameterList([lib.ones(2), lib.ones(2)])
                self.extra = nn.ParameterDict({"shift": lib.zeros(1)})

            def forward(self, x):
                for block, scale in zip(self.blocks, self.scales):
                    x = block(x) * scale
                return self.heads["out"](x) + self.extra["shift"]
        return Model()
    tm, jm = make(torch), make(torchjax)
    assert list(jm.state_dict()) == list(tm.state_dict()) and repr(jm) == repr(tm)
    jm.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.arange(6, dtype=np.float32).reshape(3, 2) / 6
    for lib, m in ((torch, tm), (torchjax, jm)):
        m(lib.tensor(x)).sum().backward()
    for (n, pt), pj in zip(tm.named_parameters(), jm.parameters()):
        np.testing.assert_allclose(pj.grad.numpy(), pt.grad.numpy(), rtol=1e-5, err_msg=n)
