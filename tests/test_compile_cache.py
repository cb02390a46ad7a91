"""The persistent compilation cache (torchjax/_compile_cache.py) and compile_stats / the
`compiles` log topic (torchjax/_compile_stats.py).

The cache tests run a small training script in fresh processes on a temporary
TORCHJAX_CACHE_DIR: the first processes compile (two at once, sharing the directory), a later
one must load every program from the cache and compute exactly the same numbers.
"""

import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import torchjax
from torchjax import _compile_cache

# one worker runs the module (pyproject's --dist loadgroup): its module-scoped fixture
# starts processes once, not once per worker
pytestmark = pytest.mark.xdist_group("compile-cache")

SCRIPT = r"""
import json
import numpy as np
import torchjax as torch
from torchjax._autograd import engine

# the fused backward compiled on this thread at step 2, used from then on, in every process:
# in the background it could be ready at step 3 in one process and not in another, and the
# fused program may round differently from the node-by-node pass
engine.BACKGROUND = False
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
opt = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5))
y = torch.tensor([0, 2, 1, 2])
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
# a second graph structure: its first pass runs node by node (the first one, the training
# step's, was fused at once: engine.FUSE_FIRST)
(model(x) ** 2).sum().backward()
print(json.dumps({"losses": losses,
                  "weights": [p.detach().numpy().tolist() for p in model.parameters()],
                  "stats": vars(torch.compile_stats())}))
"""

# variables of the parent (the user's shell, the test session) that would change the child
_SCRUB = ("TORCHJAX_CACHE", "TORCHJAX_CACHE_DIR", "TORCHJAX_CACHE_PROGRAMS", "TORCHJAX_LOGS",
          "JAX_COMPILATION_CACHE_DIR",
          "JAX_ENABLE_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
          "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    # these tests are about compiled programs on disk: the host tier (which evaluates a
    # program's first calls with NumPy and compiles only hot ones) is off in them, and
    # tests/host_tier checks a warm process with it on
    env["TORCHJAX_HOST_TIER"] = "0"
    env.update(extra)
    return env


def _start(env, code=SCRIPT):
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(proc):
    out, err = proc.communicate(timeout=900)  # a busy shared VM
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1]), err


def _run(env, code=SCRIPT):
    return _finish(_start(env, code))


def _entries(cache_dir):
    return sorted(Path(cache_dir).glob("xla-*/*.xla"))


@pytest.fixture(scope="module")
def uncached():
    """The script without the persistent cache, with the compiles log on."""
    return _run(_env(TORCHJAX_CACHE="0", TORCHJAX_LOGS="compiles"))


def test_a_second_process_loads_every_program_and_computes_the_same(tmp_path, uncached):
    cache = tmp_path
    # two cold processes at once on one empty directory: both compile and write
    cold = [_start(_env(TORCHJAX_CACHE_DIR=str(cache)))
            for _ in range(2)]
    cold = [_finish(p)[0] for p in cold]
    for r in cold:
        st = r["stats"]
        # each program compiled was looked up first; another process, or an identical
        # program made earlier in the same one, may have written some already (hits: on a
        # fast machine one process can find most of the other's programs written)
        assert st["compiled"] + st["cache_hits"] > 5
        assert st["cache_misses"] == st["compiled"]
    # JAX's entries, and the program cache's (programs/: what torchjax names, kept before
    # tracing; compiled without JAX's cache)
    programs = sorted(Path(cache).glob("xla-*/programs/*.xla"))
    assert len(_entries(cache)) + len(programs) >= cold[0]["stats"]["compiled"]
    assert programs and not list((programs[0].parent / "tmp").iterdir())  # no temp file left

    warm, _ = _run(_env(TORCHJAX_CACHE_DIR=str(cache)))
    st = warm["stats"]
    assert st["compiled"] == 0 and st["cache_misses"] == 0
    assert st["cache_hits"] == cold[0]["stats"]["compiled"] + cold[0]["stats"]["cache_hits"]
    # the program cache (_programs.py) loads them before tracing: nothing is traced again
    assert st["traced"] == 0 and st["lowered"] == 0
    assert len(programs) == st["cache_hits"]

    # damaged program entries: a warning each, then JAX's cache or a compile; same numbers
    magic = _compile_cache._MAGIC_PREFIX + _compile_cache._compression() + b"\n"
    garbage, truncated, bad_pickle = programs[:3]
    garbage.write_bytes(os.urandom(2000))
    truncated.write_bytes(truncated.read_bytes()[:100])
    payload = b"not a pickled executable" * 10
    bad_pickle.write_bytes(magic + hashlib.blake2b(payload, digest_size=32).digest() + payload)
    damaged, err = _run(_env(TORCHJAX_CACHE_DIR=str(cache)))
    assert err.count("torchjax: ignoring corrupted compilation cache entry") == 2
    assert err.count("torchjax: ignoring unusable program cache entry") == 1
    assert damaged["stats"]["traced"] == 3

    off, _ = uncached
    assert off["stats"]["cache_hits"] == off["stats"]["cache_misses"] == 0
    assert off["stats"]["compiled"] == st["cache_hits"]
    for r in [*cold, warm, damaged]:  # bit for bit
        assert r["losses"] == off["losses"]
        assert r["weights"] == off["weights"]


def _corrupt(files):
    """Damage entries the ways a disk, a killed process or a bad writer can; returns how
    many of them torchjax's digest catches and how many JAX itself fails to load."""
    magic = _compile_cache._MAGIC_PREFIX + _compile_cache._compression() + b"\n"
    garbage, truncated, empty, bad_payload, bad_executable, other = files[:6]
    garbage.write_bytes(os.urandom(3000))
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    empty.write_bytes(b"")
    # a well-formed entry (right digest) whose contents JAX cannot decompress ...
    payload = b"not a compressed executable" * 40
    bad_payload.write_bytes(magic + hashlib.blake2b(payload, digest_size=32).digest() + payload)
    # ... and one that decompresses to an executable XLA cannot load
    exe = zlib.compress(b"\0\0\0\1" + os.urandom(5000))
    bad_executable.write_bytes(magic + hashlib.blake2b(exe, digest_size=32).digest() + exe)
    # an entry written while JAX compressed differently (zstandard installed since): a miss
    value = other.read_bytes()[len(magic):]
    other.write_bytes(_compile_cache._MAGIC_PREFIX + b"other\n" + value)
    return 3, 2


def test_corrupted_entries_are_ignored_with_a_warning(tmp_path):
    # (a copy of another test's directory would not do: JAX's key includes the directory)
    # JAX's own entries: the program cache, which would load most programs before JAX looks
    # at its entries, is off here (the test above damages its entries)
    env = _env(TORCHJAX_CACHE_DIR=str(tmp_path), TORCHJAX_CACHE_PROGRAMS="0")
    cold, _ = _run(env)
    ours, jaxs = _corrupt(_entries(tmp_path))
    damaged, err = _run(env)
    assert err.count("torchjax: ignoring corrupted compilation cache entry") == ours
    assert err.count("Error reading persistent compilation cache entry") == jaxs
    assert damaged["losses"] == cold["losses"]
    assert damaged["weights"] == cold["weights"]
    assert damaged["stats"]["compiled"] == 6
    # the bad entries were replaced: the next process loads everything again
    again, err = _run(env)
    assert again["stats"]["compiled"] == 0 and "corrupted" not in err
    assert again["losses"] == cold["losses"]


def test_an_unusable_cache_directory_warns_and_compiles(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    out, err = _run(_env(TORCHJAX_CACHE_DIR=str(blocker)))
    assert "cannot use the compilation cache directory" in err
    assert out["stats"]["compiled"] > 5 and out["stats"]["cache_hits"] == 0


def test_the_users_own_jax_cache_settings_are_kept(tmp_path):
    # importing torchjax only sets options: no directory made, no thread started (DataLoader
    # workers fork from a server that imported torchjax)
    code = ("import jax, json, os, threading, torchjax\n"
            "print(json.dumps([jax.config.jax_compilation_cache_dir,"
            " jax.config.jax_persistent_cache_min_compile_time_secs,"
            " os.path.exists(os.environ.get('TORCHJAX_CACHE_DIR') or '/nonexistent'),"
            " threading.active_count()]))\n")
    (theirs, min_time, _, _), _ = _run(_env(JAX_COMPILATION_CACHE_DIR=str(tmp_path)), code)
    assert theirs == str(tmp_path) and min_time == 1.0
    ours_dir = tmp_path / "ours"
    (ours, min_time, made, threads), _ = _run(_env(TORCHJAX_CACHE_DIR=str(ours_dir)), code)
    assert ours.startswith(str(ours_dir) + os.sep + "xla-") and min_time == 0.0
    assert not made and threads == 1
    for off in ({"TORCHJAX_CACHE": "0"}, {"TORCHJAX_CACHE_DIR": ""}):
        (none, *_), _ = _run(_env(**off), code)
        assert none is None


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    for k in _SCRUB + ("XDG_CACHE_HOME",):
        monkeypatch.delenv(k, raising=False)
    home = os.path.expanduser("~")
    assert _compile_cache._root() == os.path.join(home, ".cache", "torchjax")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _compile_cache._root() == os.path.join(str(tmp_path), "torchjax")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert _compile_cache._root() == os.path.join(home, ".cache", "torchjax")
    monkeypatch.setenv("TORCHJAX_CACHE_DIR", str(tmp_path / "x"))
    assert _compile_cache._root() == str(tmp_path / "x")
    monkeypatch.setenv("TORCHJAX_CACHE_DIR", "")
    assert _compile_cache._root() is None
    monkeypatch.delenv("TORCHJAX_CACHE_DIR")
    monkeypatch.setenv("TORCHJAX_CACHE", "0")
    assert _compile_cache._root() is None


def test_compile_stats_counts_a_new_program(monkeypatch):
    import jax

    from torchjax import _host_tier

    v = jax.numpy.ones(3).block_until_ready()
    before = torchjax.compile_stats(reset=True)
    assert before.traced >= 0
    cleared = torchjax.compile_stats()
    assert cleared.traced == cleared.compiled == cleared.cache_hits == 0
    # a constant no other program has: a new XLA program, or a persistent-cache hit of it
    scale = int.from_bytes(os.urandom(4), "little") / 7.0
    jax.jit(lambda v: v * scale)(v).block_until_ready()
    st = torchjax.compile_stats()
    assert st.traced == st.lowered == 1
    assert st.compiled + st.cache_hits == 1
    assert st.total_seconds > 0 and "traced 1" in str(st)
    # an op on a shape used nowhere else in the suite, nor in an earlier run's cache
    x = torchjax.ones(3, 11, 5 + int.from_bytes(os.urandom(3), "little") % 100_000)
    # the host tier evaluates a new shape's first calls with NumPy: counted apart
    (x * 2.5).sum().item()
    assert torchjax.compile_stats().host_calls >= 1
    monkeypatch.setattr(_host_tier, "ON", [False])
    (x * 3.5).sum().item()
    # (made, or loaded from the program cache, which a warm suite finds without tracing)
    after = torchjax.compile_stats()
    assert after.compiled + after.cache_hits > 1


def test_logs_compiles_prints_a_line_per_compile(uncached):
    out, err = uncached
    lines = [ln for ln in err.splitlines() if ln.startswith("[torchjax.compiles] ")]
    st = out["stats"]
    assert len(lines) == st["compiled"] + st["cache_hits"] > 5
    assert all(" ms" in ln and "compiled in" in ln for ln in lines)
    # the op or backward node, the argument shapes, and the line of the script
    assert any(ln.startswith("[torchjax.compiles] linear: jit(") and "f32[4,5]" in ln
               for ln in lines)
    assert any("AddmmBackward0: " in ln for ln in lines)
    assert sum("jit(fused)" in ln for ln in lines) == 1  # the training step's, at step 1
    assert any("Adam." in ln for ln in lines)
    assert all(" at <string>:" in ln for ln in lines)


def test_prune_keeps_the_directory_under_its_size(tmp_path):
    now = __import__("time").time()
    for i in range(10):  # entry i was last used i hours ago
        f = tmp_path / f"jit_f-{i}.xla"
        f.write_bytes(b"x" * 1000)
        os.utime(f, (now - 3600 * i, now - 3600 * i))
    stale = tmp_path / "tmp"
    stale.mkdir()
    (stale / "half-written").write_bytes(b"x")
    os.utime(stale / "half-written", (now - 7200, now - 7200))
    assert _compile_cache.prune(str(tmp_path), max_bytes=20_000) == 0
    assert _compile_cache.prune(str(tmp_path), max_bytes=5_000) == 6  # down to 80%: 4 left
    left = sorted(p.name for p in tmp_path.glob("*.xla"))
    assert left == [f"jit_f-{i}.xla" for i in range(4)]  # the most recently used
    assert not list(stale.iterdir())
    assert not _compile_cache._prune_due(str(tmp_path))


def test_prune_deletes_other_jaxlib_versions_unused_for_a_month(tmp_path):
    now = __import__("time").time()
    current, recent, old = (tmp_path / n for n in ("xla-2.0", "xla-1.9", "xla-1.8"))
    for d, days in ((current, 90), (recent, 3), (old, 40)):
        d.mkdir()
        (d / "last-pruned").write_bytes(b"")
        os.utime(d / "last-pruned", (now - days * 86400,) * 2)
    (tmp_path / "not-ours").mkdir()
    _compile_cache.prune(str(current))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-ours", "xla-1.9", "xla-2.0"]


def test_skipping_jax_cache_is_for_the_calling_thread_only():
    """A program-cache compile skips JAX's persistent cache on its own thread; a compile that
    another thread runs meanwhile still uses it (was process-wide: a warm run compiled it)."""
    import threading

    import jax
    from jax._src import compilation_cache as cc

    backend = jax.devices()[0].client
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def skipping():
        with _compile_cache.without_jax_cache():
            seen["inside"] = cc.is_cache_used(backend)
            inside.set()
            done.wait(10)

    t = threading.Thread(target=skipping)
    t.start()
    inside.wait(10)
    seen["other thread"] = cc.is_cache_used(backend)
    done.set()
    t.join()
    seen["after"] = cc.is_cache_used(backend)
    assert seen["inside"] is False
    assert seen["other thread"] == seen["after"]
    assert seen["after"] is (_compile_cache.directory is not None and _compile_cache.owned)
