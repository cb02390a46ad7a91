"""A VAE in the style of PyTorch's examples/vae/main.py: fc encoder to mu and logvar, the
reparameterisation trick, BCE + KL loss summed over the batch, a DataLoader over a dataset
class, train/test epochs with model.train()/eval(), a checkpoint round trip, and sampling
from the prior. The reparameterisation noise comes from NumPy so both libraries draw the
same."""

import argparse
import os
import tempfile

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

from _record import finish, grad_norms, init_stats, record, rng, seed_parameters

parser = argparse.ArgumentParser(description='VAE Example')
parser.add_argument('--batch-size', type=int, default=16, metavar='N')
parser.add_argument('--epochs', type=int, default=2, metavar='N')
parser.add_argument('--no-cuda', action='store_true', default=False)
parser.add_argument('--seed', type=int, default=1, metavar='S')
parser.add_argument('--log-interval', type=int, default=1, metavar='N')
args = parser.parse_args()
args.cuda = not args.no_cuda and torch.cuda.is_available()

torch.manual_seed(args.seed)
device = torch.device("cuda" if args.cuda else "cpu")
kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}

D = 64  # 8x8 "images"


class Digits(Dataset):
    """Binary-ish images and a fixed noise draw per sample."""

    def __init__(self, n, seed):
        g = rng(seed)
        self.images = (g.uniform(size=(n, 1, 8, 8)) > 0.6).astype(np.float32)
        self.noise = g.normal(size=(n, 4)).astype(np.float32)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i]), torch.from_numpy(self.noise[i]), i % 10


train_loader = DataLoader(Digits(48, 0), batch_size=args.batch_size, shuffle=False, **kwargs)
test_loader = DataLoader(Digits(16, 1), batch_size=args.batch_size, shuffle=False, **kwargs)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(D, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, D)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, D))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


model = VAE().to(device)
record("init", init_stats(model))
seed_parameters(model, seed=5)
optimizer = optim.Adam(model.parameters(), lr=1e-2)


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, D), reduction='sum')
    # see Appendix B from VAE paper: 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    losses = []
    for batch_idx, (data, eps, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data, eps)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        if epoch == 1 and batch_idx == 0:
            record("grad_norms", grad_norms(model))
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            losses.append(loss.item() / len(data))
    record(f"train_losses_{epoch}", losses)
    record(f"train_avg_{epoch}", train_loss / len(train_loader.dataset))


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, eps, labels) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data, eps)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n], recon_batch.view(args.batch_size, 1, 8, 8)[:n]])
                record(f"comparison_{epoch}", comparison[n:n + 1, 0, 0])
                record(f"labels_{epoch}", labels.tolist())
    test_loss /= len(test_loader.dataset)
    record(f"test_loss_{epoch}", test_loss)


if __name__ == "__main__":
    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.from_numpy(rng(epoch).normal(size=(4, 4)).astype(np.float32))
            sample = model.decode(sample).cpu()
            record(f"sample_{epoch}", sample.view(4, 1, 8, 8)[0, 0, 0])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "vae.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": args.epochs}, path)
        checkpoint = torch.load(path, map_location=device)
        model2 = VAE()
        model2.load_state_dict(checkpoint["model"])
        optimizer2 = optim.Adam(model2.parameters(), lr=1e-2)
        optimizer2.load_state_dict(checkpoint["optimizer"])
        record("epoch", checkpoint["epoch"])
    data, eps, _ = next(iter(train_loader))
    for m, opt in ((model, optimizer), (model2, optimizer2)):
        m.train()
        opt.zero_grad()
        loss = loss_function(*m(data, eps), data) if False else loss_function(
            *(lambda r: (r[0], data, r[1], r[2]))(m(data, eps)))
        loss.backward()
        opt.step()
    record("resumed_equal", bool(torch.allclose(model.fc4.bias, model2.fc4.bias)))
    record("resumed", model2.fc4.bias[:4])
    finish()
