"""A warm process loads the programs its script needed last time ahead, on another thread
(torchjax/_program_prefetch.py): the same results, nothing compiled, the programs taken from
the thread; a damaged manifest is ignored with a warning; forked DataLoader workers do not
wait for the parent's thread; only scripts get manifests."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import torchjax
from tests.test_compile_cache import _env
from torchjax import _compile_cache, _program_first_run, _program_prefetch

pytestmark = pytest.mark.xdist_group("compile-cache")

SCRIPT = r"""
import json, os, sys, time
import numpy as np
import torchjax as torch
from torchjax import _program_prefetch
from torchjax._autograd import engine

engine.BACKGROUND = False  # (the fused backward at step 2 in every process, as in
                           # test_compile_cache)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
opt = torch.optim.AdamW(model.parameters(), lr=0.05)
if os.environ.get("PAUSE"):  # (reading a dataset: the thread loads ahead meanwhile)
    time.sleep(float(os.environ["PAUSE"]))
x = torch.tensor(np.linspace(-1, 1, 48, dtype=np.float32).reshape(8, 6))
y = torch.tensor([0, 1, 2, 1, 0, 2, 2, 1])
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
if os.environ.get("WORKERS"):  # DataLoader workers forked while the thread may be loading
    class Squares(torch.utils.data.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            return torch.full((3,), float(i)) ** 2 + 1

    loader = torch.utils.data.DataLoader(Squares(), batch_size=4,
                                         num_workers=int(os.environ["WORKERS"]))
    losses.append(sum(float(b.sum()) for b in loader))
print(json.dumps({"losses": losses,
                  "weights": [p.detach().numpy().tolist() for p in model.parameters()],
                  "stats": vars(torch.compile_stats()),
                  "prefetch": _program_prefetch.STATS}))
"""

def _run(script, cache, **extra):
    # (compiled programs on disk are the subject: test_compile_cache's environment, the host
    # tier off; this module's own switch comes only from `extra`)
    env = _env(TORCHJAX_CACHE_DIR=str(cache), **extra)
    if "TORCHJAX_PREFETCH" not in extra:
        env.pop("TORCHJAX_PREFETCH", None)
    # (the script runs from its own directory: this torchjax, wherever it was imported from)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(torchjax.__file__).parent.parent)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=900, cwd=script.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _manifests(cache):
    return sorted(Path(cache).glob("xla-*/programs/manifest-*.xla"))


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return path


def test_a_warm_run_takes_its_programs_from_the_thread(script, tmp_path):
    cache = tmp_path / "cache"
    cold, _ = _run(script, cache)
    assert cold["prefetch"]["listed"] == 0 and cold["stats"]["compiled"] > 3
    assert len(_manifests(cache)) == 1  # written at exit
    warm, err = _run(script, cache, TORCHJAX_LOGS="compiles", PAUSE="1")
    assert warm["stats"]["compiled"] == 0
    hits = warm["stats"]["cache_hits"]
    assert warm["prefetch"]["listed"] >= hits > 3
    # the programs needed after the pause came from the thread (the first one or two, the
    # parameters' draws, the process may load itself before the thread starts on them)
    assert hits - 2 <= warm["prefetch"]["taken"] <= hits
    assert "(ahead, on another thread)" in err
    off, _ = _run(script, cache, TORCHJAX_PREFETCH="0")
    assert off["prefetch"]["listed"] == 0 and off["stats"]["compiled"] == 0
    assert warm["losses"] == cold["losses"] == off["losses"]
    assert warm["weights"] == cold["weights"] == off["weights"]


def test_a_damaged_manifest_is_ignored_with_a_warning(script, tmp_path):
    cache = tmp_path / "cache"
    cold, _ = _run(script, cache)
    (manifest,) = _manifests(cache)
    manifest.write_bytes(manifest.read_bytes()[:-20] + b"\0" * 20)  # its digest fails
    warm, err = _run(script, cache)
    assert "ignoring corrupted compilation cache entry" in err
    assert warm["prefetch"]["listed"] == 0 and warm["stats"]["compiled"] == 0
    assert warm["losses"] == cold["losses"]
    # a manifest whose bytes are intact but whose content is not a manifest
    store = _compile_cache._FileCache(str(manifest.parent))
    store.put(manifest.name[:-len(".xla")], b"not a pickle")
    warm, err = _run(script, cache)
    assert "ignoring unreadable program cache manifest" in err
    assert warm["prefetch"]["listed"] == 0 and warm["losses"] == cold["losses"]


def test_forked_dataloader_workers_do_not_wait_for_the_thread(script, tmp_path):
    cache = tmp_path / "cache"
    cold, _ = _run(script, cache, WORKERS="2")
    warm, _ = _run(script, cache, WORKERS="2", PAUSE="1")
    assert warm["prefetch"]["taken"] > 3 and warm["losses"] == cold["losses"]
    assert cold["losses"][-1] == sum((i * i + 1) * 3 for i in range(8))


@pytest.mark.parametrize("argv, kept", [
    (["train.py", "--epochs", "2"], True),
    (["-c"], False),
    ([""], False),
    (["lib/site-packages/pytest/__main__.py", "-q"], False),  # (python -m pytest)
    (["lib/site-packages/ipykernel_launcher.py", "-f", "k.json"], False),
    (["notes.txt"], False),
])
def test_only_scripts_get_manifests(argv, kept, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name in ("train.py", "notes.txt") + ((argv[0],) if argv[0].endswith(".py") else ()):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")  # (the files exist: only their names decide)
    monkeypatch.setattr(sys, "argv", argv)
    assert (_program_prefetch._fingerprint() is not None) == kept


def test_the_command_line_names_the_manifest(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("")
    names = set()
    for argv in (["train.py"], ["train.py", "--lr", "1"], [str(tmp_path / "train.py")]):
        monkeypatch.setattr(sys, "argv", argv)
        names.add(_program_prefetch._fingerprint())
    assert len(names) == 2  # a relative and an absolute path name the same script


def test_a_loop_is_never_run_on_zeros():
    import threading

    import jax
    from jax import lax

    # on zeros this loop would never end (0 * 2 < 1 for ever)
    looping = jax.jit(lambda x: lax.while_loop(lambda v: v < 1, lambda v: v * 2, x))
    compiled = looping.lower(jax.numpy.ones(())).compile()
    t = threading.Thread(target=_program_first_run.on_zeros, args=(compiled,), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive()
    # a program without a loop runs once, on zeros of its argument types
    plain = jax.jit(lambda x, n: x * 2 + n).lower(jax.numpy.ones(3), jax.numpy.int32(1)).compile()
    assert _zeros_runs(plain) == [[((3,), np.float32, 0.0), ((), np.int32, 0.0)]]


def _zeros_runs(compiled):
    """The calls (shape, dtype, sum of each argument) _program_first_run makes of compiled."""
    calls = []

    class Spy:
        def __getattr__(self, name):
            return getattr(compiled, name)

        def __call__(self, *args):
            calls.append([(a.shape, a.dtype, float(a.sum())) for a in args])
            return compiled(*args)

    _program_first_run.on_zeros(Spy())
    return calls


def test_a_64_bit_program_with_an_unused_argument_runs_on_zeros():
    # (a fused backward's and an update's first runs: int64 or float64 arguments, made in
    # torchjax's x64 scope, and arguments the program does not read, which XLA's input
    # shardings leave out)
    import jax

    from torchjax._x64 import scope

    with scope():
        compiled = jax.jit(lambda x, n, unused: x * 2 + n).lower(
            jax.numpy.ones(3, np.float64), np.int64(1), jax.numpy.ones(2, np.float32)).compile()
    assert _zeros_runs(compiled) == [[((3,), np.float64, 0.0), ((), np.int64, 0.0),
                                      ((2,), np.float32, 0.0)]]


def test_a_program_made_ahead_is_listed_where_it_is_first_used(monkeypatch):
    """The optimizer's update is made at the first zero_grad and used at the end of the step:
    the manifest lists it where it is used (the next run loads in that order); one made ahead
    and never used comes last."""
    monkeypatch.setattr(_program_prefetch, "_state", dict(
        _program_prefetch._state, started=True, fingerprint="manifest-test", listed=None))
    monkeypatch.setattr(_program_prefetch, "_needed", [])
    monkeypatch.setattr(_program_prefetch, "_needed_keys", set())
    monkeypatch.setattr(_program_prefetch, "_ahead", {})
    monkeypatch.setattr(_program_prefetch, "_stop", [False])
    note = _program_prefetch.note
    note(None, "update", "tree-u", "cpu", ahead=True)
    note(None, "forward", "tree-f", "cpu")
    note(None, "never used", "tree-n", "cpu", ahead=True)
    note(None, "update", "tree-u", "cpu")  # its first use, after the forward
    note(None, "forward", "tree-f", "cpu")  # (again: listed once)
    kept = {}

    class Store:
        def put(self, key, data):
            kept[key] = data

    _program_prefetch._write(Store())
    import pickle
    assert [x[0] for x in pickle.loads(kept["manifest-test"])] == ["forward", "update",
                                                                     "never used"]


def test_a_program_compiled_ahead_makes_its_first_run_on_zeros(monkeypatch):
    # (a fused backward compiled on the engine's thread: its first run, ~0.1 s more than the
    # later ones for a GPT's, is that thread's, not the step's)
    import jax.numpy as jnp

    from torchjax import _chunk_draws, _programs

    ran = []
    monkeypatch.setattr(_program_first_run, "on_zeros", ran.append)
    f = _programs.jit(_chunk_draws._probe)
    n = int(np.random.default_rng().integers(7, 10 ** 6))  # (a new size: nothing on disk)
    args = (jnp.arange(float(n)), jnp.float32(2), jnp.float32(1))
    make = _programs.compile_ahead(f, args)
    make()
    if jax_platform() == "cpu":
        assert len(ran) == 1 and ran[0].__class__.__name__ == "Compiled"
    assert _programs.made(f, args)


def jax_platform():
    import jax
    return jax.devices()[0].platform
