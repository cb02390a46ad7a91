"""The torch submodules real scripts import: each imports, its common names work or raise
"not supported", and `python -m torchjax script.py` runs an ordinary PyTorch script."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import types
import warnings

import pytest
import torch

import torchjax
from torchjax import amp, backends, distributed, hub, jit, onnx, overrides, profiler, random
from torchjax import multiprocessing as tmp
from torchjax import nn as tnn
from torchjax.version import TorchVersion

# one worker runs the module (pyproject's --dist loadgroup): its module-scoped fixture
# starts processes once, not once per worker
pytestmark = pytest.mark.xdist_group("import-surface")

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


# ---------------------------------------------------------------- python -m torchjax

TRAIN = '''
import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Checked(TensorDataset):
    """Runs in the DataLoader's worker processes too: torch must be torchjax there."""

    def __getitem__(self, i):
        assert sys.modules["torch"].__name__ == "torchjax", sys.modules["torch"]
        return super().__getitem__(i)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(0)
    x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
    loader = DataLoader(Checked(x, y), batch_size=16, shuffle=True, num_workers=args.workers)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if len(losses) == args.steps:
            break
    print("argv", sys.argv[1:])
    print("steps", len(losses), "loss", losses[-1])


if __name__ == "__main__":
    main()
    real = [name for name, m in sys.modules.items()
            if m is not None and getattr(m, "__name__", "").split(".")[0] == "torch"]
    print("torch", torch.__name__, "real", real)
'''

ALIASES = '''
import sys
import torchjax
torchjax.install_as_torch()
import torch, torch.nn as nn, torch.nn.functional as F
import torch.backends.cudnn as cudnn
from torch import Tensor
from torch.nn.parallel import DataParallel
from torch.cuda.amp import GradScaler
import torch.autograd.profiler
from jax._src import xla_bridge
assert not xla_bridge._backends, "importing the torch modules started an XLA backend"
assert torch is torchjax and nn is torchjax.nn and F is torchjax.nn.functional
assert cudnn is torchjax.backends.cudnn and Tensor is torchjax.Tensor
assert DataParallel is torchjax.nn.parallel.DataParallel
assert torchjax.nn.__spec__.name == "torchjax.nn"  # relative imports keep working
assert torch.nn.parallel.DataParallel  # submodules are attributes, as in PyTorch
torchjax.install_as_torch()  # again: nothing changes
for expr in ("torch.foo", "torch.nn.functional.foo", "torch.utils.mobile_optimizer", "torch.fx.symbolic_trace"):
    try:
        eval(expr)
    except AttributeError as e:
        print("AttributeError", e)
for name in ("torch.utils.mobile_optimizer", "torch._C", "torch.distributed.rpc", "torch.fx"):
    try:
        __import__(name)
    except ModuleNotFoundError as e:
        print("ModuleNotFoundError", e)
assert not xla_bridge._backends, "importing torch.fx started an XLA backend"
# (nor did it wrap torch's functions: only a Tracer or a Proxy does, see fx/_tracing_functions)
assert not hasattr(torch.relu, "_fx_original") and not hasattr(F.relu, "_fx_original")
print("real", [n for n, m in sys.modules.items() if getattr(m, "__name__", "") == "torch"])
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both subprocesses, started together (each spends seconds importing JAX)."""
    d = tmp_path_factory.mktemp("scripts")
    (d / "train.py").write_text(TRAIN)
    (d / "aliases.py").write_text(ALIASES)
    procs = {
        "train": subprocess.Popen(
            [sys.executable, "-m", "torchjax", str(d / "train.py"), "--steps", "3",
             "--workers", "2"], cwd=d, env=_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True),
        "aliases": subprocess.Popen(
            [sys.executable, str(d / "aliases.py")], cwd=d, env=_env(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    }
    out = {}
    for name, p in procs.items():
        stdout, stderr = p.communicate(timeout=300)
        out[name] = (p.returncode, stdout, stderr)
    return out


def test_python_m_torchjax_runs_a_pytorch_training_script(runs):
    code, out, err = runs["train"]
    assert code == 0, err
    lines = dict(line.split(" ", 1) for line in out.splitlines())
    assert lines["argv"] == "['--steps', '3', '--workers', '2']"
    assert lines["steps"].startswith("3 loss ")
    loss = float(lines["steps"].split()[-1])
    assert 0.0 < loss < 5.0
    # torch was torchjax, in the script and in its DataLoader workers (which re-run the script),
    # and PyTorch itself was never imported under any name
    assert lines["torch"] == "torchjax real []"


def test_install_as_torch_aliases_modules_and_names_what_is_missing(runs):
    code, out, err = runs["aliases"]
    assert code == 0, err
    assert "AttributeError torch.foo is not supported by torchjax" in out
    assert "AttributeError torch.nn.functional.foo is not supported by torchjax" in out
    assert "AttributeError torch.utils.mobile_optimizer is not supported by torchjax" in out
    assert "ModuleNotFoundError torch.utils.mobile_optimizer is not supported by torchjax" in out
    # torch.fx is there (torchjax.fx): found as an attribute and as a module, and importing
    # it started no XLA backend
    assert "torch.fx" not in out
    assert "ModuleNotFoundError torch._C is not supported by torchjax" in out
    assert "ModuleNotFoundError torch.distributed.rpc is not supported by torchjax" in out
    assert out.strip().endswith("real []")


def test_python_m_torchjax_without_a_script_prints_usage(capsys):
    from torchjax.__main__ import main
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "usage: python -m torchjax script.py" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["no/such/script.py"])
    assert "can't open file" in capsys.readouterr().err


def test_install_as_torch_refuses_when_pytorch_is_already_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    with pytest.raises(RuntimeError, match="already imported"):
        torchjax.install_as_torch()


def test_missing_attribute_names_the_torch_api():
    with pytest.raises(AttributeError, match=r"torch\.no_such_function is not supported"):
        torchjax.no_such_function  # noqa: B018
    assert not hasattr(torchjax, "no_such_function")


# ---------------------------------------------------------------- version

def test_version_compares_as_pytorch_does():
    v = TorchVersion("2.13.0+torchjax")
    assert torch.__version__.startswith(v.split("+")[0])
    for other in ["2.0", "2.13", "2.13.0", "2.13.1", "2.14.0a0", "2.13.0.dev20250101", "1.13.1",
                  (2, 13), (2, 13, 0), (2, 14)]:
        for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__"):
            assert getattr(v, op)(other) == getattr(torch.__version__, op)(other), (op, other)
    assert v.split(".")[:2] == ["2", "13"]
    assert torchjax.version.cuda is None and torchjax.version.__version__ == v


# ---------------------------------------------------------------- backends, cuda

def test_backends_flags_match_pytorch_defaults_and_are_settable():
    for module, names in [("cudnn", ["enabled", "benchmark", "deterministic", "allow_tf32"]),
                          ("mkldnn", ["enabled"]), ("opt_einsum", ["enabled", "strategy"])]:
        for name in names:
            assert getattr(getattr(backends, module), name) == getattr(
                getattr(torch.backends, module), name), (module, name)
    assert backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    assert backends.mps.is_available() is False and backends.mps.is_built() is False
    assert backends.opt_einsum.is_available() is True
    assert backends.openmp.is_available() is False and backends.mkl.is_available() is False
    before = backends.cudnn.benchmark
    with backends.cudnn.flags(enabled=True, benchmark=True, deterministic=True):
        assert backends.cudnn.benchmark and backends.cudnn.deterministic
    assert backends.cudnn.benchmark == before and not backends.cudnn.deterministic
    try:
        torchjax.backends.cudnn.benchmark = True
        torchjax.backends.cuda.matmul.allow_tf32 = True
        assert backends.cudnn.benchmark and backends.cuda.matmul.allow_tf32
    finally:
        backends.cudnn.benchmark = before
        backends.cuda.matmul.allow_tf32 = False
    with backends.cuda.sdp_kernel(enable_flash=False):
        assert not backends.cuda.flash_sdp_enabled()
    assert backends.cuda.flash_sdp_enabled()


@pytest.mark.skipif(torchjax.cuda.is_available(), reason="checks the CPU-only answers")
def test_cuda_without_a_gpu():
    c = torchjax.cuda
    assert c.is_available() is False and c.device_count() == 0
    assert c.memory_allocated() == 0 and c.max_memory_allocated() == 0
    assert c.memory_reserved() == 0
    c.empty_cache()
    c.synchronize()
    c.reset_peak_memory_stats()
    c.manual_seed(3)
    c.manual_seed_all(3)
    assert torchjax.initial_seed() == 3
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        c.get_device_name()
    with pytest.raises(RuntimeError, match="no CUDA GPU is available"):
        c.get_device_properties(0)
    assert c.is_bf16_supported() is False


# ---------------------------------------------------------------- amp

@pytest.mark.skipif(torchjax.cuda.is_available(), reason="checks the CPU-only answers")
def test_amp_disabled_is_a_no_op_and_cuda_without_a_gpu_disables():
    with amp.autocast("cpu", enabled=False):
        assert not torchjax.is_autocast_enabled("cpu")

    @amp.autocast("cpu", enabled=False)
    def f(x):
        return x + 1

    assert f(1) == 2
    assert amp.GradScaler("cpu").is_enabled()  # CPU autocast and scaling are real (tests/amp)
    # PyTorch on a machine without a GPU: CUDA autocast / scalers warn and turn themselves off
    with pytest.warns(UserWarning, match="no CUDA GPU"):
        ctx = torchjax.cuda.amp.autocast()
    with ctx:
        assert not torchjax.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="no CUDA GPU"):
        scaler = torchjax.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
    assert scaler.state_dict() == {} == torch.amp.GradScaler("cpu", enabled=False).state_dict()

    model = tnn.Linear(2, 1)
    opt = torchjax.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torchjax.ones(1, 2)).sum()
    assert scaler.scale(loss) is loss
    scaler.scale(loss).backward()
    before = model.weight.detach().clone()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert not torchjax.equal(model.weight.detach(), before)


# ---------------------------------------------------------------- distributed, parallel

def test_distributed_matches_pytorch_without_a_process_group(monkeypatch):
    assert distributed.is_available() is torch.distributed.is_available() is True
    assert distributed.is_initialized() is False
    assert torch.distributed.is_initialized() is False
    for name in ("get_rank", "get_world_size", "barrier"):
        with pytest.raises(ValueError):
            getattr(torch.distributed, name)()
        with pytest.raises(ValueError, match="process group has not been initialized"):
            getattr(distributed, name)()
    with pytest.raises(ValueError, match="process group"):
        distributed.all_reduce(torchjax.ones(2))
    # env:// without torchrun's variables: PyTorch's error names the missing one
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ValueError, match="environment variable RANK expected"):
        distributed.init_process_group("gloo")
    with pytest.raises(ValueError, match="environment variable RANK expected"):
        torch.distributed.init_process_group("gloo")
    assert distributed.is_initialized() is False
    assert distributed.ReduceOp.SUM.name == "SUM" and distributed.Backend("GLOO") == "gloo"


def test_distributed_process_group_of_one(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    distributed.init_process_group("gloo")
    try:
        assert distributed.is_initialized() and distributed.get_rank() == 0
        assert distributed.get_world_size() == 1 and distributed.get_backend() == "gloo"
        t = torchjax.tensor([1.0, 2.0])
        distributed.all_reduce(t, op=distributed.ReduceOp.MAX)
        assert t.tolist() == [1.0, 2.0]
        out = [torchjax.zeros(2)]
        distributed.all_gather(out, t)
        assert out[0].tolist() == [1.0, 2.0]
        with pytest.raises(ValueError, match="twice"):
            distributed.init_process_group("gloo")
        # a group of one traces: collectives work inside a compiled step

        @torchjax.compile(fullgraph=True)
        def step(x):
            y = x * 2
            distributed.all_reduce(y, op=distributed.ReduceOp.AVG)
            return y
        assert step(t).tolist() == [2.0, 4.0]
    finally:
        distributed.destroy_process_group()
    assert not distributed.is_initialized()


def test_data_parallel_wraps_one_device_and_ddp_replicates():
    from torchjax.nn.parallel import DataParallel, DistributedDataParallel, data_parallel
    inner = tnn.Linear(3, 2)
    dp = DataParallel(inner)
    x = torchjax.randn(4, 3)
    assert dp.module is inner and torchjax.equal(dp(x), inner(x))
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert list(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict()) == list(
        dp.state_dict())
    assert torchjax.equal(data_parallel(inner, x), inner(x))
    # one device here: DDP's mesh is that device (8-device checks: tests/distributed)
    ddp = DistributedDataParallel(tnn.Linear(3, 2))
    assert ddp.device_mesh.size() == 1 and ddp(x).shape == (4, 2)
    with pytest.raises(NotImplementedError, match="register_comm_hook is not supported"):
        ddp.register_comm_hook(None, None)


# ---------------------------------------------------------------- multiprocessing

def _succeeds(i):
    pass


def test_multiprocessing_reexports_python_multiprocessing():
    import multiprocessing
    for name in ("Process", "Queue", "set_start_method", "get_start_method", "cpu_count"):
        assert hasattr(tmp, name)
    assert tmp.cpu_count() == multiprocessing.cpu_count()
    assert tmp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    tmp.set_sharing_strategy("file_system")
    assert tmp.get_sharing_strategy() == "file_system"
    tmp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="sharing strategy"):
        tmp.set_sharing_strategy("shared_memory")


def _fails(i):
    raise ValueError(f"child {i} failed")


# fork keeps these children fast: they run plain Python and never touch JAX's threads
@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="needs the fork start method")
@pytest.mark.filterwarnings("ignore:os.fork")
def test_multiprocessing_spawn_joins_and_reports_a_child_traceback():
    ctx = tmp.spawn(_succeeds, nprocs=2, join=False, start_method="fork")
    while not ctx.join():
        pass
    assert len(ctx.pids()) == 2
    with pytest.raises(tmp.ProcessRaisedException, match="child 0 failed"):
        tmp.spawn(_fails, nprocs=1, start_method="fork")


def test_share_memory_returns_self_and_shares():
    t = torchjax.ones(2)
    m = tnn.Linear(2, 2)
    assert t.share_memory_() is t and m.share_memory() is m
    assert t.is_shared() and m.weight.is_shared()  # tests/test_shared_memory.py: the rest


# ---------------------------------------------------------------- jit, onnx, hub

def test_jit_returns_code_unchanged():
    m = tnn.Linear(2, 2)

    def f(x):
        return x * 2

    assert jit.script(m) is m and jit.script(f) is f
    assert jit.trace(f, torchjax.ones(2)) is f and jit.trace_module(m, {}) is m
    assert jit.ignore(f) is f and jit.ignore(drop=True)(f) is f
    assert jit.unused(f) is f and jit.export(f) is f
    assert jit.is_scripting() is False and jit.is_tracing() is False
    assert jit.wait(jit.fork(f, 3)) == 6
    assert jit.annotate(list, []) == []
    x: jit.Final[int] = 1
    assert x == 1

    class Old(jit.ScriptModule):
        @jit.script_method
        def forward(self, x):
            return x

    assert Old()(3) == 3
    with pytest.raises(NotImplementedError, match=r"torch\.jit\.save is not supported"):
        jit.save(m, "m.pt")


def test_onnx_export_raises():
    assert onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match=r"torch\.onnx\.export is not supported"):
        onnx.export(tnn.Linear(2, 2), (torchjax.ones(1, 2),), "m.onnx")


def test_hub_reads_the_local_cache_only(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(hub, "_hub_dir", None)
    assert hub.get_dir() == str(tmp_path / "home" / "hub")
    assert torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    url = "https://example.com/weights/tiny-1234.pth"
    with pytest.raises(RuntimeError, match="not in the local cache"):
        hub.load_state_dict_from_url(url)
    state = {"w": torch.arange(3.0)}
    cache = tmp_path / "home" / "hub" / "checkpoints"
    cache.mkdir(parents=True)
    torch.save(state, cache / "tiny-1234.pth")  # a file PyTorch cached
    loaded = hub.load_state_dict_from_url(url)
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0]
    hub.set_dir(tmp_path / "other")
    assert hub.get_dir() == str(tmp_path / "other")
    with pytest.raises(RuntimeError, match="not supported by torchjax.*network"):
        hub.load("pytorch/vision", "resnet18")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "hubconf.py").write_text(
        "def tiny(n=2):\n    '''A tiny model.'''\n    return ['tiny'] * n\n")
    assert hub.load(str(tmp_path / "repo"), "tiny", 3, source="local") == ["tiny"] * 3
    assert hub.list(str(tmp_path / "repo"), source="local") == ["tiny"]
    assert hub.help(str(tmp_path / "repo"), "tiny", source="local") == "A tiny model."


# ---------------------------------------------------------------- profiler

def test_profiler_schedule_matches_pytorch():
    for kwargs in [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=2),
                   dict(wait=2, warmup=0, active=1, repeat=1, skip_first=3),
                   dict(wait=2, warmup=1, active=2, repeat=2, skip_first_wait=1)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = profiler.schedule(**kwargs), torch.profiler.schedule(**kwargs)
        assert [ours(s).name for s in range(16)] == [theirs(s).name for s in range(16)], kwargs


def test_profile_records_regions_and_saves_on_schedule(tmp_path):
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            with profiler.record_function("outer"):
                with profiler.record_function("inner"):
                    torchjax.ones(2) + 1

    @profiler.record_function("decorated")
    def g():
        return 1

    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    assert "outer" in table and "inner" in table and "# of Calls" in table
    rows = {e.key: e for e in prof.key_averages()}
    assert rows["outer"].count == 2
    assert rows["outer"].cpu_time_total >= rows["inner"].cpu_time_total
    assert rows["outer"].self_cpu_time_total <= rows["outer"].cpu_time_total
    assert g() == 1  # outside any profile: nothing recorded, nothing breaks
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    assert '"name": "outer"' in (tmp_path / "trace.json").read_text()

    saved = []
    sched = profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    with profiler.profile(schedule=sched, on_trace_ready=saved.append) as prof:
        for step in range(6):
            with profiler.record_function(f"step{step}"):
                pass
            prof.step()
    assert saved == [prof]
    assert sorted(e.key for e in prof.key_averages() if e.key.startswith("step")) == [
        "step2", "step3"]
    handler = profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    handler(prof)
    assert [p.endswith(".pt.trace.json") for p in os.listdir(tmp_path / "tb")] == [True]


def test_autograd_profiler_old_api():
    from torchjax.autograd import profiler as ap
    with ap.profile(use_cuda=False) as prof:
        with ap.record_function("region"):
            pass
    assert "region" in prof.key_averages().table()
    with ap.profile(enabled=False) as off:
        with ap.record_function("region"):
            pass
    assert len(off.key_averages()) == 0
    assert ap.record_function is profiler.record_function


# ---------------------------------------------------------------- random, overrides, types

def test_random_module_and_fork_rng():
    random.manual_seed(5)
    assert random.initial_seed() == 5
    state = random.get_rng_state()
    a = torchjax.rand(3)
    random.set_rng_state(state)
    assert torchjax.equal(torchjax.rand(3), a)
    random.set_rng_state(state)
    with random.fork_rng():
        torchjax.rand(10)
    assert torchjax.equal(torchjax.rand(3), a)


def test_overrides_report_no_torch_function():
    t = torchjax.ones(2)
    assert overrides.has_torch_function((t,)) is False
    assert overrides.has_torch_function_unary(t) is False
    assert overrides.has_torch_function_variadic(t, t) is False
    assert overrides.is_tensor_like(t) and not overrides.is_tensor_like(1)
    assert overrides.get_ignored_functions() == set()
    with pytest.raises(NotImplementedError, match="not supported by torchjax"):
        overrides.handle_torch_function(sum, (t,), t)
    with pytest.raises(NotImplementedError, match="not supported by torchjax"):
        with overrides.TorchFunctionMode():
            pass


def test_types_aliases():
    from torchjax import types as ttypes
    assert ttypes.Tensor is torchjax.Tensor and ttypes.Size is torchjax.Size
    # as in PyTorch, torch.types.SymInt is the class torch.SymInt, which a plain int is not
    assert ttypes._int is int and ttypes.SymInt is torchjax.SymInt
    assert [c.__name__ for c in ttypes.py_sym_types] == \
        [c.__name__ for c in torch.types.py_sym_types] == ["SymInt", "SymFloat", "SymBool"]


# ---------------------------------------------------------------- tensorboard

def test_tensorboard_writer_or_clear_import_error(tmp_path):
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="TensorBoard logging requires TensorBoard"):
            importlib.import_module("torchjax.utils.tensorboard")
        return
    from torchjax.utils.tensorboard import SummaryWriter
    with SummaryWriter(str(tmp_path / "run")) as w:
        w.add_scalar("loss", torchjax.tensor(0.5), 1)
        w.add_scalars("acc", {"train": 0.9, "val": 0.8}, 1)
        w.add_histogram("weights", torchjax.randn(100), 1)
        w.add_text("note", "hello", 1)
        with pytest.raises(NotImplementedError, match="add_image is not supported"):
            w.add_image("img", torchjax.zeros(3, 4, 4))
    files = [f for _, _, fs in os.walk(tmp_path / "run") for f in fs]
    assert len(files) == 3 and all(f.startswith("events.out.tfevents") for f in files)
