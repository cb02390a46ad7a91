"""The program cache keyed before tracing (torchjax/_programs.py, _program_runtime.py), on by
default: programs with LAPACK custom calls run warm (their runtime is set up before loading),
programs with other custom calls (host callbacks) are not kept, forked DataLoader workers
never run its programs, and the key follows jax, jaxlib and torchjax versions and
the compile options.

The end-to-end test runs one script in fresh processes on a temporary TORCHJAX_CACHE_DIR:
cold, warm, and with the program cache off, which must all print the same numbers.
"""

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tests.test_compile_cache import _env
from torchjax import _program_env, _program_runtime, _programs

SCRIPT = r"""
import json
import jax
import numpy as np
import torchjax as torch
from torchjax import _programs
from torchjax.utils.data import DataLoader, Dataset


class Computed(Dataset):
    # torchjax ops in __getitem__: forked workers evaluate them with NumPy, never with XLA
    def __init__(self):
        self.x = torch.arange(24.).reshape(4, 6)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        x = self.x[i]
        return torch.tanh(x / 10) * 2 - x.cumsum(0) / 3


main = [b.numpy().tolist() for b in DataLoader(Computed(), batch_size=2)]
forked = [b.numpy().tolist() for b in DataLoader(Computed(), batch_size=2, num_workers=2)]
# LAPACK custom calls (a segfault when a deserialized one ran without its setup)
a = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
L, info = torch.linalg.cholesky_ex(a)
q, r = torch.linalg.qr(a * 2)
w = torch.linalg.eigvalsh(a.double())
# a host callback, in a program named the way torchjax names its own: never kept
cb = _programs.program(
    lambda v: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(v.shape, v.dtype), v) + 1,
    "test:host-callback")
c = cb(jax.numpy.arange(3.0))
print(json.dumps({"main": main, "forked": forked,
                  "linalg": [t.numpy().tolist() for t in (L, info, q, r, w)],
                  "callback": np.asarray(c).tolist(),
                  "stats": vars(torch.compile_stats())}))
"""


def _run(env):
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]  # -11: the LAPACK segfault
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr


def test_custom_calls_and_forked_workers_with_the_program_cache(tmp_path):
    env = _env(TORCHJAX_CACHE_DIR=str(tmp_path))
    cold, _ = _run(env)
    warm, err = _run({**env, "TORCHJAX_LOGS": "compiles"})
    off, _ = _run(_env(TORCHJAX_CACHE_DIR=str(tmp_path / "off"), TORCHJAX_CACHE_PROGRAMS="0"))
    assert "torchjax:" not in err  # no cache warning
    for r in (cold, warm, off):
        np.testing.assert_allclose(r["forked"], r["main"], rtol=1e-6)
        for k in ("main", "forked", "linalg", "callback"):
            assert r[k] == off[k], k
    assert off["callback"] == list(np.sin(np.arange(3.0, dtype=np.float32)) + 1)
    # warm, the LAPACK programs were loaded before tracing; only the host-callback program
    # was compiled again (JAX's persistent cache does not keep host callbacks either)
    for op in ("linalg_cholesky_ex", "linalg_qr", "linalg_eigvalsh", "tanh", "cumsum"):
        assert f"[torchjax.compiles] {op}: loaded from the program cache" in err, op
    assert "jit(<lambda>)(f32[3]) compiled in" in err
    assert warm["stats"]["compiled"] == 1
    assert warm["stats"]["traced"] < cold["stats"]["traced"] - 10
    assert off["stats"]["compiled"] == cold["stats"]["compiled"]


def test_needs_names_lapack_and_refuses_other_custom_calls():
    x = jnp.eye(3) * 2
    assert _program_runtime.needs(jax.jit(jnp.linalg.cholesky).lower(x)) == ("lapack",)
    assert _program_runtime.needs(jax.jit(jnp.tanh).lower(x)) == ()
    callback = jax.jit(lambda v: jax.pure_callback(
        np.cos, jax.ShapeDtypeStruct(v.shape, v.dtype), v))
    with pytest.raises(_program_runtime.NotKept, match="callback"):
        _program_runtime.needs(callback.lower(x))
    with pytest.raises(_program_runtime.NotKept):
        _program_runtime.set_up(("a runtime of a newer torchjax",))


def test_the_key_follows_the_versions(monkeypatch):
    import jaxlib

    import torchjax.version
    sig = (("tree", ("a", "float32", (3,), False, False, "cpu", 0, "device")),)
    base = _programs._key("op:tanh", sig)
    assert _programs._key("op:tanh", sig) == base
    assert _programs._key("op:sin", sig) != base
    for module, name in ((jax, "__version__"), (jaxlib, "__version__"),
                         (torchjax.version, "__version__")):
        with monkeypatch.context() as m:
            m.setattr(module, name, "0.0.0-other")
            m.setattr(_program_env, "_source_fingerprint", None)  # recomputed with the version
            assert _programs._key("op:tanh", sig) != base, module.__name__
    monkeypatch.setattr(_program_env, "_source_fingerprint", None)
    assert _programs._key("op:tanh", sig) == base
    # and the compile options: the suite's unoptimised executables never reach a user
    optimised = not jax.config.read("jax_disable_most_optimizations")
    try:
        jax.config.update("jax_disable_most_optimizations", optimised)
        assert _programs._key("op:tanh", sig) != base
    finally:
        jax.config.update("jax_disable_most_optimizations", not optimised)
    assert _programs._key("op:tanh", sig) == base
    # and the XLA options it compiles with (the suite's quick ones, tests/conftest.py)
    monkeypatch.setattr(_programs, "compiler_options", {"xla_cpu_use_fusion_emitters": True})
    assert _programs._key("op:tanh", sig) != base


def test_the_source_fingerprint_lists_every_source_file(tmp_path):
    """The key's source part names each .py file of the tree (path, size, mtime), in
    os.walk's order: an edited op in a development tree is another program."""
    import os
    for rel in ("b.py", "a.py", "notes.txt", "sub/z.py", "sub/deeper/y.py", "other/x.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    lines = []
    _program_env._list_sources(str(tmp_path), "", lines)
    names = [line.split(":")[0] for line in lines]
    walked = []
    for d, dirs, files in os.walk(tmp_path):
        dirs.sort()
        walked += [os.path.relpath(os.path.join(d, f), tmp_path) for f in sorted(files)
                   if f.endswith(".py")]
    assert names == walked == ["a.py", "b.py", os.path.join("other", "x.py"),
                               os.path.join("sub", "z.py"),
                               os.path.join("sub", "deeper", "y.py")]
    (tmp_path / "link").symlink_to(tmp_path / "sub", target_is_directory=True)
    linked = []  # (os.walk does not descend into a link to a directory)
    _program_env._list_sources(str(tmp_path), "", linked)
    assert linked == lines
    (tmp_path / "sub" / "z.py").write_text("x = 22\n")  # (another size)
    again = []
    _program_env._list_sources(str(tmp_path), "", again)
    assert again[:3] == lines[:3] and again[3] != lines[3] and again[4] == lines[4]


def test_two_programs_of_one_function_each_run_their_own_executable(monkeypatch):
    """JAX's C++ cache keys fast paths by the function: two programs of one function (here
    one donating its argument) must not run each other's executable."""

    from torchjax import _host_tier
    monkeypatch.setattr(_host_tier, "ON", [False])  # (compiled, both)

    def f(x):
        return jnp.tanh(x) * 2

    donating = _programs.program(f, "test-one-function-two-programs", donate_argnums=(0,))
    plain = _programs.program(f, "test-one-function-two-programs")
    donating(jnp.ones((4, 4), jnp.float32))
    x = jnp.ones((4, 4), jnp.float32)
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(plain(x)), np.tanh(1.0) * 2, rtol=1e-6)
        assert not x.is_deleted()  # (the donating executable would have consumed it)
    assert len(plain._program.compiled) == len(donating._program.compiled) == 1


def test_compiler_options_reach_the_executable(monkeypatch, tmp_path):
    """A program made under other XLA options is compiled with them, and a switch back finds
    the executable made under the first ones (on disk) instead of the other's."""
    import torchjax
    from torchjax import _compile_cache, _deferred, _host_tier
    if not _programs.enabled():
        pytest.skip("the program cache is off (TORCHJAX_CACHE=0)")
    monkeypatch.setattr(_compile_cache, "directory", str(tmp_path))
    monkeypatch.setattr(_host_tier, "ON", [False])  # (compiled programs are the subject)
    x = torchjax.arange(12.).reshape(3, 4)

    def made_by(options):
        monkeypatch.setattr(_programs, "compiler_options", options)
        _programs.clear()
        jax.clear_caches()  # (JAX's own in-memory executables, from earlier tests)
        before = torchjax.compile_stats()
        # the ops' own programs, run as they are called (deferred, the repeated call would
        # run later as one sequence: tests/test_deferred_cache.py)
        was, _deferred.ON[0] = _deferred.ON[0], False
        try:
            torchjax.tanh(x * 1.125)
        finally:
            _deferred.ON[0] = was
        after = torchjax.compile_stats()
        return after.compiled - before.compiled, after.cache_hits - before.cache_hits

    first = _programs.compiler_options
    other = None if first else {"xla_cpu_use_fusion_emitters": True}
    made = made_by(first)  # (the multiplication and tanh)
    assert made[0] > 0 and made[1] == 0
    assert made_by(other) == made  # not the first ones' executables
    assert made_by(first) == made[::-1]  # the first ones', from disk


DEVICES_SCRIPT = r"""
import json
import jax
import torchjax as torch

assert len(jax.devices()) == 8
x = torch.arange(6.).reshape(2, 3)
on3 = torch.from_numpy(x.numpy()).to("cpu:3")  # committed to the fourth device
got = [torch.tanh(x) * 2, (torch.tanh(on3) * 2).to("cpu:0")]
print(json.dumps({"values": [t.numpy().tolist() for t in got],
                  "stats": vars(torch.compile_stats())}))
"""


def test_entries_of_a_process_with_8_devices_load_onto_their_own_device(tmp_path):
    # deserialize_and_load's default puts an executable on every device of the backend:
    # a warm process with 8 (virtual) devices then found every entry unusable ("Expected args
    # ... to have 8 shards, got [1, 1]") and compiled it again, with a warning
    env = _env(TORCHJAX_CACHE_DIR=str(tmp_path),
               XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    runs = []
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", DEVICES_SCRIPT], env=env,
                             capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stderr[-3000:]
        assert "torchjax:" not in res.stderr  # no unusable entry
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert warm["values"] == cold["values"]
    assert cold["stats"]["compiled"] > 0
    assert warm["stats"]["compiled"] == 0
    assert warm["stats"]["cache_hits"] == cold["stats"]["compiled"]


def test_the_key_follows_the_device_count(monkeypatch):
    sig = (("tree", ("a", "float32", (3,), False, False, "cpu", 0, "device")),)
    base = _programs._key("op:tanh", sig)
    monkeypatch.setattr(jax, "devices", lambda *a: [jax.local_devices()[0]] * 8)
    assert _programs._key("op:tanh", sig) != base
