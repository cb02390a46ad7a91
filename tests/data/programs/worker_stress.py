# Starts and exhausts a 2-worker DataLoader 50 times while a small model trains on its
# batches, so JAX is at work in this process whenever workers fork (the last step of an
# epoch is still running as the next epoch's workers start). tests/data/test_worker_stress.py
# runs it under a timeout: a fork that deadlocks shows as a timeout, not as a hung suite.
import sys
import time

import torchjax as torch
from torchjax.utils.data import DataLoader, Dataset, TensorDataset


class Arrays(Dataset):
    """NumPy samples, batched by default_collate in the workers."""

    def __init__(self, x, y):
        self.x, self.y = x.numpy(), y.numpy()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Computed(Dataset):
    """torchjax ops per sample: the forked workers evaluate them with NumPy."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] * 2 - self.x[i], self.y[i]


torch.manual_seed(0)
x = torch.randn(32, 4)
y = x.sum(1, keepdim=True)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
datasets = [TensorDataset(x, y), Arrays(x, y), Computed(x, y)]
epochs = int(sys.argv[1])
start = time.perf_counter()
losses = []
for epoch in range(epochs):
    loader = DataLoader(datasets[epoch % 3], batch_size=16, shuffle=True, num_workers=2,
                        timeout=30)
    for xb, yb in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()  # not read back here
    losses.append(loss)
print(len(losses), losses[0].item(), losses[-1].item(), time.perf_counter() - start)
