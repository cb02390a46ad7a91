# A PyTorch program as tutorials write it: no main guard, classes defined in the main
# program, a lambda collate_fn, a closure worker_init_fn, datasets holding numpy arrays,
# tensors, an open file and a generator. tests/data/test_worker_start.py runs it with torch
# and with torchjax (as a file and through standard input) and compares what it prints.
import os
import sys
import tempfile

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info


def show(batch):
    if isinstance(batch, torch.Tensor):
        return (str(batch.dtype), batch.tolist())
    if isinstance(batch, dict):
        return {k: show(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [show(b) for b in batch]
    return batch


class Squares(Dataset):
    def __init__(self):
        self.table = np.arange(8, dtype=np.float32) ** 2
        self.scale = lambda v: v * 10  # a lambda the workers call

    def __len__(self):
        return len(self.table)

    def __getitem__(self, i):
        return {"sq": self.table[i], "i": i, "ten": self.scale(i)}


class Plain(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return i


class Records(Dataset):
    """Reads fixed-width records from a file it holds open."""

    def __init__(self, f):
        self.f = f

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return int(os.pread(self.f.fileno(), 4, 4 * i))


class Counting(IterableDataset):
    """Holds a generator; every worker iterates its own copy of it."""

    def __init__(self):
        self.gen = (3 * i for i in range(5))

    def __iter__(self):
        w = get_worker_info()
        return ((w.id, v) for v in self.gen)


def make_init(offset):
    def init(worker_id):
        get_worker_info().dataset.table += offset
    return init


path = os.path.join(tempfile.mkdtemp(), "records")
with open(path, "w") as f:
    f.write("".join(f"{10 * i:4d}" for i in range(5)))
records = open(path)

print("squares", [show(b) for b in DataLoader(Squares(), batch_size=3, num_workers=2)])
print("lambda", [show(b) for b in DataLoader(Squares(), batch_size=3, num_workers=2,
                                              collate_fn=lambda b: [d["i"] for d in b])])
print("init", [show(b) for b in DataLoader(Squares(), batch_size=4, num_workers=2,
                                            worker_init_fn=make_init(0.5))])
print("file", [show(b) for b in DataLoader(Records(records), batch_size=2, num_workers=2)])
print("generator", [show(b) for b in DataLoader(Counting(), batch_size=2, num_workers=2)])
tensors = TensorDataset(torch.arange(10.).reshape(5, 2), torch.arange(5))
print("tensors", [show(b) for b in DataLoader(tensors, batch_size=2, num_workers=2,
                                               pin_memory=True)])
persistent = DataLoader(Squares(), batch_size=4, num_workers=2, persistent_workers=True,
                        prefetch_factor=3)
print("persistent", [[show(b) for b in persistent] for _ in range(2)])

if torch.__name__ == "torchjax":  # what forkserver says about this program instead of dying
    try:
        iter(DataLoader(Plain(), num_workers=1, multiprocessing_context="forkserver"))
    except RuntimeError as e:
        print("# forkserver:", e, file=sys.stderr)
