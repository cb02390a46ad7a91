"""Eager equals compiled: N training steps of the same loop leave the same parameters,
gradients, optimizer state and buffers, and each compiled call is one XLA execution."""

from __future__ import annotations

import numpy as np
import pytest

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn

from .common import Counting, assert_states_close, state_arrays

STEPS = 4


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        # no bias before BatchNorm (as ResNets write it): BatchNorm removes any per-channel
        # constant, so that bias's gradient is zero in exact arithmetic, round-off noise that
        # Adam's normalisation turns into full steps (see AdamW below)
        self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class LSTMNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 8)
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True, dropout=0.2)
        self.head = nn.Linear(12, 3)

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens))
        return self.head(out[:, -1])


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(11, 16)
        self.pos = nn.Parameter(torch.randn(7, 16) * 0.1)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(16, 3)

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        h = self.enc(self.emb(tokens) + self.pos[: tokens.shape[1]], mask=mask, is_causal=True)
        return self.head(h.mean(1))


def _data(kind, n):
    rng = np.random.default_rng(0)
    if kind in ("lstm", "transformer"):
        xs = [torch.tensor(rng.integers(0, 11, (5, 7))) for _ in range(n)]
    elif kind == "cnn":
        xs = [torch.tensor(rng.standard_normal((5, 1, 8, 8)).astype(np.float32))
              for _ in range(n)]
    else:
        xs = [torch.tensor(rng.standard_normal((5, 6)).astype(np.float32)) for _ in range(n)]
    ys = [torch.tensor(rng.integers(0, 3, (5,))) for _ in range(n)]
    return xs, ys


# AdamW is left to the MLP: on the transformer, gradients that are zero in exact arithmetic
# (the key bias of attention) are round-off noise that Adam's normalisation turns into full
# steps, so eager and compiled part ways by more than round-off there (as two PyTorch kernels
# would).
CASES = {
    "mlp-sgd": ("mlp", mlp, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9,
                                                       weight_decay=1e-3),
                lambda o: torch.optim.lr_scheduler.StepLR(o, 2, gamma=0.5)),
    "mlp-adam": ("mlp", mlp, lambda ps: torch.optim.Adam(ps, lr=0.01), None),
    "cnn-bn-dropout": ("cnn", CNN, lambda ps: torch.optim.Adam(ps, lr=0.01), None),
    "lstm": ("lstm", LSTMNet, lambda ps: torch.optim.Adam(ps, lr=0.01), None),
    "transformer": ("transformer", Transformer, lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9),
                    lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 3)),
}


def _run(case, compiled):
    kind, build, make_opt, make_sched = CASES[case]
    torch.manual_seed(0)
    model = build()
    opt = make_opt(model.parameters())
    sched = make_sched(opt) if make_sched else None

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        return loss

    fn = torch.compile(step) if compiled else step
    xs, ys = _data(kind, STEPS)
    torch.manual_seed(123)  # dropout draws from here on, the same in both runs
    losses, states, counts = [], [], []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if compiled and i >= 2:
            with Counting() as c:
                before = fn.executions
                loss = fn(x, y)
            counts.append((c.ops, c.backwards, fn.executions - before))
        else:
            loss = fn(x, y)
        losses.append(loss.item())
        states.append(state_arrays(model, opt))
    lr = opt.param_groups[0]["lr"]
    return losses, states, counts, lr, fn


@pytest.mark.parametrize("case", sorted(CASES))
def test_eager_equals_compiled(case):
    losses_e, states_e, _, lr_e, _ = _run(case, False)
    losses_c, states_c, counts, lr_c, fn = _run(case, True)
    np.testing.assert_allclose(losses_c, losses_e, rtol=2e-5, atol=1e-6)
    for se, sc in zip(states_e, states_c):
        assert_states_close(sc, se)
    assert lr_c == lr_e
    # every call is one execution of one program: no eager op, no backward pass outside it;
    # the gradients and optimizer state the first step creates lazily are made before the
    # first program is built, so the loop compiles once
    assert counts == [(0, 0, 1)] * (STEPS - 2)
    assert fn.compiles == 1


def _mlp_sgd_step(also_detached=False):
    """A compiled whole MLP + SGD step returning its loss (and loss.detach())."""
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return (loss, loss.detach()) if also_detached else loss

    return step


def test_one_execution_per_call_whole_loop():
    step = _mlp_sgd_step()
    xs, ys = _data("mlp", 6)
    step(xs[0], ys[0])
    with Counting() as c:
        for x, y in zip(xs[1:], ys[1:]):
            step(x, y)
    assert (c.ops, c.backwards) == (0, 0)
    assert step.compiles == 1 and step.executions == 6


def test_returned_loss_shows_its_spent_graph():
    """The loss a step returned after its own backward prints with a grad_fn, and another
    backward through it raises PyTorch's error, as a torch.compile'd step's loss does."""
    step = _mlp_sgd_step(also_detached=True)
    xs, ys = _data("mlp", 3)
    for x, y in zip(xs, ys):
        loss, plain = step(x, y)
    assert "grad_fn=<CompiledFunctionBackward>" in repr(loss)
    assert loss.requires_grad and not plain.requires_grad
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        (loss * 2).backward()


def test_sgd_dampening_keeps_its_first_step():
    """SGD with momentum and dampening treats its first step specially: two programs, and the
    same values as eager."""
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        model = mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.5)

        def step(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        fn = torch.compile(step) if compiled else step
        for x, y in zip(*_data("mlp", 3)):
            fn(x, y)
        results.append(state_arrays(model, opt))
    assert_states_close(results[1], results[0])
    assert fn.compiles == 2
