"""Actor-critic in the style of PyTorch's examples/reinforcement_learning/actor_critic.py,
without torch.distributions: a two-headed Policy, SavedAction namedtuples of log-probabilities
and values, discounted returns normalised with mean/std and eps, smooth-L1 value loss, and
REINFORCE in the style of reinforce.py with a running reward. The environment is a small
deterministic cart-pole in NumPy, and actions are drawn by NumPy from the policy's
probabilities, so both libraries see the same episodes."""

import argparse
from collections import namedtuple
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

from _record import finish, grad_norms, init_stats, record, rng, seed_parameters

parser = argparse.ArgumentParser(description='PyTorch actor-critic example')
parser.add_argument('--gamma', type=float, default=0.99, metavar='G')
parser.add_argument('--seed', type=int, default=543, metavar='N')
parser.add_argument('--episodes', type=int, default=3)
args = parser.parse_args()

torch.manual_seed(args.seed)

SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class CartPole:
    """Enough of gym's CartPole-v1 dynamics for a few short episodes."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)
        self.state = None

    def reset(self):
        self.state = self.g.uniform(-0.05, 0.05, size=4)
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        costheta, sintheta = np.cos(theta), np.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sintheta) / 1.1
        thetaacc = (9.8 * sintheta - costheta * temp) / (0.5 * (4.0 / 3.0 - 0.1 * costheta ** 2 / 1.1))
        xacc = temp - 0.05 * thetaacc * costheta / 1.1
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * xacc
        theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * thetaacc
        self.state = np.array([x, x_dot, theta, theta_dot])
        done = bool(x < -2.4 or x > 2.4 or theta < -0.21 or theta > 0.21)
        return self.state.astype(np.float32), 1.0, done, False, {}


class Policy(nn.Module):
    """implements both actor and critic in one model"""

    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 32)
        # actor's layer
        self.action_head = nn.Linear(32, 2)
        # critic's layer
        self.value_head = nn.Linear(32, 1)
        # action & reward buffer
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


class ReinforcePolicy(nn.Module):
    def __init__(self):
        super(ReinforcePolicy, self).__init__()
        self.affine1 = nn.Linear(4, 32)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(32, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


eps = np.finfo(np.float32).eps.item()
action_rng = rng(7)


def select_action(model, state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    p = probs.detach().numpy().astype(np.float64)
    action = int(action_rng.choice(2, p=p / p.sum()))
    log_prob = torch.log(probs.gather(0, torch.tensor([action]))).squeeze(0)
    model.saved_actions.append(SavedAction(log_prob, state_value))
    return action


def finish_episode(model, optimizer):
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []  # list to save actor (policy) loss
    value_losses = []  # list to save critic (value) loss
    returns = []  # list to save the true values
    for r in model.rewards[::-1]:
        R = r + args.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


def reinforce_select(policy, state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    p = probs[0].detach().numpy().astype(np.float64)
    action = int(action_rng.choice(2, p=p / p.sum()))
    policy.saved_log_probs.append(torch.log(probs[0, action]))
    return action


def reinforce_finish(policy, optimizer):
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat([p.unsqueeze(0) for p in policy_loss]).sum()
    policy_loss.backward()
    norms = grad_norms(policy)
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item(), norms


def main():
    env = CartPole(args.seed)
    model = Policy()
    record("init", init_stats(model))
    seed_parameters(model, seed=3)
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    running_reward = 10
    history = []
    for i_episode in range(args.episodes):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 40):
            action = select_action(model, state)
            state, reward, done, _, _ = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss = finish_episode(model, optimizer)
        history.append([ep_reward, running_reward, loss])
        if i_episode == 0:
            record("grad_norms", grad_norms(model))
    record("actor_critic", history)
    with torch.no_grad():
        probs, value = model(torch.zeros(4))
    record("final", [probs, value])

    policy = ReinforcePolicy()
    seed_parameters(policy, seed=4)
    optimizer = optim.Adam(policy.parameters(), lr=1e-2)
    running_reward = 10
    history = []
    for i_episode in count(1):
        state, ep_reward = env.reset()[0], 0
        for t in range(1, 30):
            action = reinforce_select(policy, state)
            state, reward, done, _, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss, norms = reinforce_finish(policy, optimizer)
        history.append([ep_reward, running_reward, loss, norms["affine2.weight"]])
        if i_episode == args.episodes:
            break
    record("reinforce", history)
    finish()


if __name__ == '__main__':
    main()
