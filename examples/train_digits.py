"""Train a small CNN on scikit-learn's bundled 8x8 handwritten digits with torchjax.

    pip install -e ".[demo]" && python examples/train_digits.py
    python examples/train_digits.py --compile   # each step as one XLA program

Plain PyTorch code: change the first import to `import torch` and it runs under PyTorch.
"""

import argparse
import time

from sklearn.datasets import load_digits
from tqdm import tqdm

import torchjax as torch
from torchjax import nn
from torchjax.utils.data import DataLoader, TensorDataset, random_split


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16x4x4
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32x2x2
        )
        self.classifier = nn.Sequential(nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Dropout(0.2),
                                        nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += y.numel()
    model.train()
    return correct / total


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--compile", action="store_true",
                        help="run each training step as one XLA program (torch.compile)")
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    digits = load_digits()  # 1797 images of 8x8 pixels, values 0..16
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target)
    train_set, test_set = random_split(TensorDataset(images, labels), [0.8, 0.2],
                                       generator=torch.Generator().manual_seed(0))
    # drop_last: every step has the same shapes, so XLA compiles the step's programs once
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              drop_last=True)
    test_loader = DataLoader(test_set, batch_size=256)

    model = DigitsCNN()
    print(model)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, "
          f"{len(train_set)} training and {len(test_set)} test images")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()

    def train_step(x, y):
        optimizer.zero_grad()
        logits = model(x)
        loss = loss_fn(logits, y)
        loss.backward()
        optimizer.step()
        return loss, logits

    if args.compile:
        train_step = torch.compile(train_step)

    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        seen = correct = 0
        total_loss = 0.0
        bar = tqdm(train_loader, desc=f"epoch {epoch:2d}/{args.epochs}", leave=True)
        for x, y in bar:
            loss, logits = train_step(x, y)
            seen += y.numel()
            total_loss += loss.item() * y.numel()
            correct += (logits.argmax(1) == y).sum().item()
            bar.set_postfix(loss=f"{total_loss / seen:.4f}", acc=f"{correct / seen:.3f}")
        scheduler.step()
    elapsed = time.perf_counter() - start
    print(f"trained {args.epochs} epochs in {elapsed:.1f} s")
    accuracy = evaluate(model, test_loader)
    print(f"test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
