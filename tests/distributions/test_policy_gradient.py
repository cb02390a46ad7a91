"""Policy-gradient training with Categorical policies: torchjax draws the actions, a PyTorch
copy of the same network (same initial weights) is fed the same actions, and the two must
hold the same parameters after every one of 5 optimiser steps."""

import numpy as np
import torch

import torchjax

from .helpers import assert_close, numpy

STEPS = 5
BATCH = 8
rng = np.random.default_rng(0)
STATES = rng.standard_normal((STEPS, BATCH, 4)).astype(np.float32)


def reward(states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """+1 for the action the state's first three features rank highest, -0.5 otherwise."""
    return np.where(actions == states[:, :3].argmax(1), 1.0, -0.5).astype(np.float32)


def copy_weights(src, dst):
    for (name, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
        with torchjax.no_grad():
            q.copy_(torchjax.tensor(p.detach().numpy()))
        assert tuple(p.shape) == tuple(q.shape), name


def assert_same_parameters(t_model, j_model, step):
    for (name, p), (_, q) in zip(t_model.named_parameters(), j_model.named_parameters()):
        assert_close(q, p, 1e-5, 1e-6, what=f"step {step}: {name}")


def test_reinforce_matches_torch_step_for_step():
    torch.manual_seed(0)
    t_policy = torch.nn.Linear(4, 3)
    j_policy = torchjax.nn.Linear(4, 3)
    copy_weights(t_policy, j_policy)
    t_opt = torch.optim.Adam(t_policy.parameters(), lr=0.05)
    j_opt = torchjax.optim.Adam(j_policy.parameters(), lr=0.05)
    torchjax.manual_seed(0)
    for step in range(STEPS):
        s = STATES[step]
        j_dist = torchjax.distributions.Categorical(logits=j_policy(torchjax.tensor(s)))
        actions = j_dist.sample()
        assert actions.dtype == torchjax.int64 and tuple(actions.shape) == (BATCH,)
        a = numpy(actions)
        r = reward(s, a)
        advantage = r - r.mean()
        t_dist = torch.distributions.Categorical(logits=t_policy(torch.tensor(s)))
        for lib, dist, opt, act in ((torch, t_dist, t_opt, torch.tensor(a)),
                                    (torchjax, j_dist, j_opt, actions)):
            opt.zero_grad()
            loss = -(dist.log_prob(act) * lib.tensor(advantage)).mean()
            loss.backward()
            opt.step()
        assert_same_parameters(t_policy, j_policy, step)


def make_actor_critic(lib):
    nn = lib.nn

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 16)
            self.actor = nn.Linear(16, 3)
            self.critic = nn.Linear(16, 1)

        def forward(self, x):
            h = lib.tanh(self.body(x))
            return self.actor(h), self.critic(h).squeeze(-1)

    return ActorCritic()


def test_actor_critic_matches_torch_step_for_step():
    torch.manual_seed(1)
    t_model, j_model = make_actor_critic(torch), make_actor_critic(torchjax)
    copy_weights(t_model, j_model)
    t_opt = torch.optim.Adam(t_model.parameters(), lr=0.02)
    j_opt = torchjax.optim.Adam(j_model.parameters(), lr=0.02)
    torchjax.manual_seed(1)
    for step in range(STEPS):
        s = STATES[step]
        j_logits, j_value = j_model(torchjax.tensor(s))
        j_dist = torchjax.distributions.Categorical(logits=j_logits)
        actions = j_dist.sample()
        a = numpy(actions)
        r = reward(s, a)
        t_logits, t_value = t_model(torch.tensor(s))
        t_dist = torch.distributions.Categorical(logits=t_logits)
        for lib, dist, value, opt, act in (
                (torch, t_dist, t_value, t_opt, torch.tensor(a)),
                (torchjax, j_dist, j_value, j_opt, actions)):
            opt.zero_grad()
            rt = lib.tensor(r)
            advantage = rt - value.detach()
            actor = -(dist.log_prob(act) * advantage).mean()
            critic = lib.nn.functional.mse_loss(value, rt)
            loss = actor + 0.5 * critic - 0.01 * dist.entropy().mean()
            loss.backward()
            opt.step()
        assert_same_parameters(t_model, j_model, step)
