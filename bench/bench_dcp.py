"""Checkpointing an FSDP model and its Adam state on 8 virtual CPU devices: torchjax's
torch.distributed.checkpoint (sharded; its own layout and PyTorch's .distcp one) and
torch.save of the full state dict, against
PyTorch's own dcp and torch.save of the same sizes in one process.

    python bench/bench_dcp.py            # 5 rounds
    python bench/bench_dcp.py --rounds 3

The model: bench_distributed.py's MLP 256-1024-1024-256, fully_shard on each Linear and the
model, one Adam step taken (so the moments exist): 1.6 M parameters, 18.9 MB with the
moments. Times are medians over rounds, each saving into a fresh directory of /tmp and
loading back into a fresh model and optimizer (get_state_dict, load, set_state_dict); a
save's time includes its get_state_dict (the full one gathers each sharded value).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.distributed._common import eight_devices  # noqa: E402

eight_devices()

import argparse  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import torchjax  # noqa: E402
import torchjax.distributed.checkpoint as dcp  # noqa: E402
from torchjax.distributed.checkpoint.filesystem import (  # noqa: E402
    FileSystemWriter,
    SerializationFormat,
)
from torchjax.distributed.checkpoint.state_dict import (  # noqa: E402
    StateDictOptions,
    get_state_dict,
    set_state_dict,
)
from torchjax.distributed.fsdp import fully_shard  # noqa: E402

DIMS = (256, 1024, 1024, 256)
warnings.filterwarnings("ignore", "torch.distributed is disabled")


def build(lib, shard):
    lib.manual_seed(0)
    layers = [lib.nn.Linear(a, b) for a, b in zip(DIMS, DIMS[1:])]
    model = lib.nn.Sequential(*layers)
    if shard:
        for layer in layers:
            fully_shard(layer)
        fully_shard(model)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    model(lib.ones(8, DIMS[0])).sum().backward()
    opt.step()
    return model, opt


def du(path) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def torchjax_dcp(model, opt, where, pytorch_layout=False):
    def save():
        msd, osd = get_state_dict(model, opt)
        if pytorch_layout:  # PyTorch's .distcp files (its dcp.load reads them)
            dcp.save({"model": msd, "optim": osd}, storage_writer=FileSystemWriter(
                where, serialization_format=SerializationFormat.TORCH_SAVE))
        else:
            dcp.save({"model": msd, "optim": osd}, checkpoint_id=where)
    save = timed(save)
    other, other_opt = build(torchjax, True)

    def load():
        m, o = get_state_dict(other, other_opt)
        sd = {"model": m, "optim": o}
        dcp.load(sd, checkpoint_id=where)
        set_state_dict(other, other_opt, model_state_dict=sd["model"],
                       optim_state_dict=sd["optim"])
        float(next(other.parameters()).sum())  # (done when a value is read)
    return save, timed(load)


def torchjax_full(model, opt, where):
    full = StateDictOptions(full_state_dict=True)

    def save():
        torchjax.save(get_state_dict(model, opt, options=full), where)
    other, other_opt = build(torchjax, True)

    def load():
        msd, osd = torchjax.load(where)
        set_state_dict(other, other_opt, model_state_dict=msd, optim_state_dict=osd,
                       options=full)
        float(next(other.parameters()).sum())
    return timed(save), timed(load)


def pytorch(kind, where):
    import torch
    import torch.distributed.checkpoint as pt_dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict as pt_get
    from torch.distributed.checkpoint.state_dict import set_state_dict as pt_set
    model, opt = build(torch, False)
    other, other_opt = build(torch, False)
    def save():
        msd, osd = pt_get(model, opt)
        if kind == "dcp":
            pt_dcp.save({"model": msd, "optim": osd}, checkpoint_id=where)
        else:
            torch.save((msd, osd), where)
    save = timed(save)

    def load():
        m, o = pt_get(other, other_opt)
        if kind == "dcp":
            sd = {"model": m, "optim": o}
            pt_dcp.load(sd, checkpoint_id=where)
            m, o = sd["model"], sd["optim"]
        else:
            m, o = torch.load(where)
        pt_set(other, other_opt, model_state_dict=m, optim_state_dict=o)
    return save, timed(load)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    model, opt = build(torchjax, True)
    columns = {
        "torchjax dcp (8 devices)": lambda w: torchjax_dcp(model, opt, w),
        "torchjax dcp, .distcp (8)": lambda w: torchjax_dcp(model, opt, w, True),
        "torchjax torch.save full": lambda w: torchjax_full(model, opt, w + ".pt"),
        "PyTorch dcp (1 process)": lambda w: pytorch("dcp", w),
        "PyTorch torch.save": lambda w: pytorch("save", w + ".pt"),
    }
    times = {k: [] for k in columns}
    sizes = {}
    for _ in range(args.rounds):
        for name, fn in columns.items():  # interleaved: the machine is shared
            where = tempfile.mkdtemp(prefix="bench_dcp_")
            times[name].append(fn(where))
            target = where + ".pt" if os.path.exists(where + ".pt") else where
            sizes[name] = du(target)
            shutil.rmtree(where, ignore_errors=True)
            if os.path.exists(where + ".pt"):
                os.remove(where + ".pt")
    print(f"{'':28s} {'save s':>8s} {'load s':>8s} {'MB':>6s}   (medians of {args.rounds})")
    for name, got in times.items():
        save = statistics.median(t[0] for t in got)
        load = statistics.median(t[1] for t in got)
        print(f"{name:28s} {save:8.3f} {load:8.3f} {sizes[name] / 1e6:6.1f}")


if __name__ == "__main__":
    main()
