"""A compiled step's program is named for the program cache by its jaxpr
(torchjax/compiler/_program_name.py): the name tells apart every jaxpr whose program differs,
is the same for the same jaxpr traced again, and is None where it cannot be exact. A second
process on the same cache directory loads the step's program untraced, gets the first one's
results, and still retraces a step whose state changed shape."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests.distributed._common import run_on_cache
from tests.test_compile_cache import _env
from torchjax import _programs
from torchjax.compiler import _program_name


@pytest.fixture
def cache_on(monkeypatch):
    # (whatever the session's cache configuration: the name is made only with the cache on)
    monkeypatch.setattr(_programs, "enabled", lambda: True)


def _name(fn, *args):
    return _program_name.ident("test", jax.make_jaxpr(fn)(*args))


_X = np.ones((2, 3), np.float32)


@pytest.mark.parametrize("other", [
    lambda x: x * 2.0 + 1.0000001,           # a literal one float32 step away
    lambda x: (x * 2.0 + 1.0).T,             # another op after
    lambda x: jnp.transpose(x * 2.0 + 1.0, (1, 0)).T,
    lambda x: jnp.sum(x * 2.0 + 1.0, 0),     # a parameter (the axis)
    lambda x: x * 2.0 - 1.0,                 # another primitive
    lambda x: (x * 2.0 + 1.0).astype(jnp.float16),
])
def test_different_programs_have_different_names(cache_on, other):
    assert _name(lambda x: x * 2.0 + 1.0, _X) != _name(other, _X)


def test_types_and_constants_are_part_of_the_name(cache_on):
    def f(x):
        return x * 2.0 + 1.0

    base = _name(f, _X)
    assert base == _name(f, _X.copy())  # traced again: the same name
    assert base != _name(f, np.ones((3, 2), np.float32))
    assert base != _name(f, _X.astype(np.float16))
    # a closed-over array is a constant of the jaxpr: named by its bytes
    c1, c2 = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.zeros((2, 3), np.float32)
    assert _name(lambda x: x + c1, _X) != _name(lambda x: x + c2, _X)
    assert _name(lambda x: x + c1, _X) == _name(lambda x: x + c1.copy(), _X)
    # a nested jaxpr (a cond's branches) is rendered too
    assert _name(lambda x: jax.lax.cond(True, lambda v: v + 1, lambda v: v - 1, x), _X) != \
        _name(lambda x: jax.lax.cond(True, lambda v: v + 2, lambda v: v - 1, x), _X)


def test_what_cannot_be_named_is_not(cache_on, monkeypatch):
    # a host callback's Python function: no exact name, so the step stays a plain jax.jit
    def cb(x):
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    assert _name(cb, _X) is None
    # nor is anything named with the program cache off
    monkeypatch.setattr(_programs, "enabled", lambda: False)
    assert _name(lambda x: x + 1, _X) is None


def test_a_custom_derivative_is_named_by_its_function(cache_on):
    # its rules (Python functions) are left out: the program runs the function alone
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0]))

    @jax.custom_jvp
    def g(x):
        return jnp.cos(x)

    g.defjvp(lambda p, t: (g(p[0]), -jnp.sin(p[0]) * t[0]))
    assert _name(f, _X) is not None
    assert _name(f, _X) != _name(g, _X)


_SCRIPT = r"""
import json
import jax
import numpy as np
import torchjax as torch
from torchjax import _programs, nn

traced = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, secs, **kw: traced.append(kw.get("fun_name"))
    if event == "/jax/core/compile/jaxpr_trace_duration" else None)

from torchjax.compiler import _program

# the donated arguments of each compiled call: deleted after it, as jax.jit's donation does
# (an executable loaded from the cache keeps its donation, on the C++ fast path too)
donated = []
_call_args = _program.Program._call_args


def call_args(self, known):
    args = _call_args(self, known)
    donated.append([args[pos] for pos, _ in self._call_donated])
    return args


_program.Program._call_args = call_args

out = {}
# two steps that differ only in a literal: two programs, each its own result
for name, c in (("plus_one", 1.0), ("plus_two", 2.0)):
    f = torch.compile(lambda x, c=c: (x * 3).tanh() + c)
    out[name] = f(torch.arange(4.0)).tolist()

# a constant made inside the step (position ids: arange is made on the host) is passed to
# the program as one of JAX's typed literals, which the key names by type too
positions = torch.compile(lambda x: x * 2 + torch.arange(4))
out["positions"] = positions(torch.ones(4)).tolist()

# a step whose state changes shape after its program was made (or, warm, loaded): traced
# again. With grad its program is recorded as one tape node (which checks the shapes itself);
# without, it is the step's own program, and the executables held in memory are dropped
# first (the test suite's _programs.clear()): warm, the loaded program was never traced
# here, and its first trace would be for the new shapes
def stale(grad, n_out):
    model = nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.fill_(1.0)
        model.bias.zero_()
    step = torch.compile(lambda x: model(x).sum(1))
    x = torch.ones(1, 3)
    with torch.set_grad_enabled(grad):
        first = step(x).item()
        if not grad:
            _programs.clear()
        model.weight = nn.Parameter(torch.ones(n_out, 3))
        model.bias = nn.Parameter(torch.zeros(n_out))
        return [first, step(x).item(), step.compiles]


out["stale"] = stale(True, 4)
out["stale_after_clear"] = stale(False, 5)

# a training step, its program with donated state
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1)


@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    opt.step()
    return loss


xb = torch.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4))
yb = torch.tensor([0, 1, 0, 1, 1, 0])
donated.clear()
out["train"] = [step(xb, yb).item() for _ in range(3)]
out["donated"] = [[a.is_deleted() for a in call] for call in donated]
out["traced"] = traced
out["compiled"] = torch.compile_stats().compiled
print("RESULT " + json.dumps(out))
"""


def _run(cache_dir):
    return run_on_cache(_SCRIPT, _env(), cache_dir)


def test_a_second_process_loads_the_compiled_steps(tmp_path):
    cold, warm = _run(tmp_path), _run(tmp_path)
    x = np.arange(4.0)
    np.testing.assert_allclose(cold["plus_one"], np.tanh(x * 3) + 1, rtol=1e-6)
    np.testing.assert_allclose(cold["plus_two"], np.tanh(x * 3) + 2, rtol=1e-6)
    assert cold["stale"] == [6.0, 12.0, 2]  # the new shape traced again, in both runs
    assert cold["stale_after_clear"] == [6.0, 15.0, 2]
    assert cold["train"][2] < cold["train"][0]
    for run in (cold, warm):  # the parameters (and SGD's state) donated on every call
        assert len(run["donated"]) == 3 and all(run["donated"]) and all(map(all, run["donated"]))
    assert cold["positions"] == [2.0, 3.0, 4.0, 5.0]
    for k in ("plus_one", "plus_two", "positions", "stale", "stale_after_clear", "train"):
        assert warm[k] == cold[k], k
    assert warm["compiled"] == 0
    # warm, only the user's steps are traced (torchjax.compile's trace, `body`: one per
    # step, and again for the state of another shape); their programs were traced too, by
    # the steps' own names (`<lambda>`, `step`), 8 more; and the second `stale` step begins a
    # trace of its loaded program's jaxpr for the new shapes, which it refuses
    assert {n: warm["traced"].count(n) for n in set(warm["traced"])} == {
        "body": 8, "stale.<locals>.<lambda>": 1}
    assert len(cold["traced"]) > 2 * len(warm["traced"])
