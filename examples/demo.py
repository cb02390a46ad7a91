"""torchjax demo: the seed example's gradient, then a small MLP trained with SGD.

    pip install -e . && python examples/demo.py

The same code runs under PyTorch if you change the import back to `import torch`.
"""

import math
import time

import torchjax as torch
from torchjax import nn

# 1. Autograd on the seed example: y = x*x + 3*x + 1, dy/dx = 2x + 3 = 7 at x = 2
x = torch.tensor(2.0, requires_grad=True)
y = x * x + 3 * x + 1
print(y)             # tensor(11., grad_fn=<AddBackward0>)
y.backward()
print(x.grad)        # tensor(7.)

# 2. Train the seed MLP to fit y = sin(x0) + x1 * x2 - x3^2 / 2 on random inputs
torch.manual_seed(0)
n_train, n_test = 2048, 512
X = torch.rand(n_train + n_test, 4) * 4 - 2
Y = (X[:, 0].sin() + X[:, 1] * X[:, 2] - X[:, 3] ** 2 / 2).unsqueeze(1)
X_train, Y_train, X_test, Y_test = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]

model = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                      nn.Linear(64, 1))
print(model)
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

epochs, batch = 30, 128
steps_per_epoch = n_train // batch
t0 = time.perf_counter()
for epoch in range(1, epochs + 1):
    perm = torch.randperm(n_train)
    total = 0.0
    for i in range(steps_per_epoch):
        idx = perm[i * batch:(i + 1) * batch]
        xb, yb = X_train[idx], Y_train[idx]
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch == 1 or epoch % 5 == 0:
        model.eval()
        with torch.no_grad():
            test_loss = loss_fn(model(X_test), Y_test).item()
        model.train()
        bar = "#" * int(30 * epoch / epochs)
        print(f"epoch {epoch:3d}/{epochs} [{bar:<30}] train loss {total / steps_per_epoch:.4f} "
              f"test loss {test_loss:.4f}  ({time.perf_counter() - t0:.1f}s)")

with torch.no_grad():
    final = loss_fn(model(X_test), Y_test).item()
baseline = ((Y_test - Y_train.mean()) ** 2).mean().item()
print(f"final test MSE {final:.4f} (predicting the mean gives {baseline:.4f}); "
      f"RMSE {math.sqrt(final):.3f}")
