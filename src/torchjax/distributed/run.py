"""python -m torchjax.distributed.run: torchrun's interface, starting local processes.

    python -m torchjax.distributed.run --nproc-per-node 2 train.py --epochs 3

starts 2 processes of `python -m torchjax train.py --epochs 3` (so `import torch` is torchjax)
with torchrun's variables set (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID); init_process_group reads them and joins JAX's
multi-process runtime. Several hosts: run it on each with --nnodes, --node-rank and the same
--master-addr/--master-port. When one process fails, the others are stopped and its exit
code is returned.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m torchjax.distributed.run",
        description="Start N processes of a training script, as torchrun does.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="processes on this host (an int, or 'cpu' for one)")
    p.add_argument("--nnodes", default="1", help="hosts in the job (an int)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=None)
    p.add_argument("--standalone", action="store_true",
                   help="one host, a free port (the defaults here already)")
    p.add_argument("--run-id", "--run_id", default=None)
    p.add_argument("--rdzv-backend", "--rdzv_backend", default=None)
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", default=None)
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("-m", "--module", action="store_true",
                   help="the script is a module name, run as python -m")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script as an executable, not with Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _count(value: str, what: str) -> int:
    if value in ("cpu", "auto"):
        return 1
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(f"python -m torchjax.distributed.run: {what} must be an int, got "
                         f"{value!r}") from None
    if n < 1:
        raise SystemExit(f"python -m torchjax.distributed.run: {what} must be >= 1")
    return n


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.max_restarts:
        raise SystemExit("python -m torchjax.distributed.run: --max-restarts is not supported "
                         "(JAX's runtime does not re-admit a restarted process)")
    if args.nnodes and ":" in str(args.nnodes):
        raise SystemExit("python -m torchjax.distributed.run: elastic --nnodes MIN:MAX is not "
                         "supported; give the number of hosts")
    nproc = _count(args.nproc_per_node, "--nproc-per-node")
    nnodes = _count(args.nnodes, "--nnodes")
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        addr, _, p = args.rdzv_endpoint.partition(":")
        port = int(p) if p else port
    if port is None:
        if nnodes > 1:
            raise SystemExit("python -m torchjax.distributed.run: several hosts need "
                             "--master-port (the same on every host)")
        port = _free_port()
    world = nproc * nnodes
    run_id = args.run_id or uuid.uuid4().hex
    if args.no_python:
        base = [args.training_script]
    elif args.module:
        base = [sys.executable, "-m", "torchjax", "-m", args.training_script]
    else:
        base = [sys.executable, "-m", "torchjax", args.training_script]
    procs = []
    for local in range(nproc):
        env = dict(os.environ)
        env.update(RANK=str(args.node_rank * nproc + local), LOCAL_RANK=str(local),
                   WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(nproc),
                   GROUP_RANK=str(args.node_rank), ROLE_RANK=str(args.node_rank * nproc + local),
                   ROLE_WORLD_SIZE=str(world), MASTER_ADDR=addr, MASTER_PORT=str(port),
                   TORCHELASTIC_RUN_ID=run_id, TORCHELASTIC_RESTART_COUNT="0",
                   TORCHELASTIC_MAX_RESTARTS="0", OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"))
        procs.append(subprocess.Popen(base + list(args.training_script_args), env=env))
    return _wait(procs)


def _wait(procs) -> int:
    """The first non-zero exit code (stopping the others then), else 0."""
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [c for c in codes if c not in (None, 0)]
            if failed:
                for p in procs:
                    if p.poll() is None:
                        p.send_signal(signal.SIGTERM)
                for p in procs:
                    try:
                        p.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        p.kill()
                return failed[0]
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.1)
    except KeyboardInterrupt:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait()
        return 130


if __name__ == "__main__":
    sys.exit(main())
