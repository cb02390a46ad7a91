"""Graph networks with a dense adjacency, in the style of pygcn (Kipf's GCN in PyTorch) and
pyGAT: a GraphConvolution layer with its own reset_parameters, the normalised adjacency
D^-1/2 (A + I) D^-1/2, a GAT layer whose attention is masked with torch.where over the
adjacency, NLL training on a node mask with Adam and weight decay, and accuracy."""

import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter

from _record import finish, grad_norms, init_stats, record, rng, seed_parameters


class GraphConvolution(Module):
    """Simple GCN layer, similar to https://arxiv.org/abs/1609.02907"""

    def __init__(self, in_features, out_features, bias=True):
        super(GraphConvolution, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.mm(adj, support)
        if self.bias is not None:
            return output + self.bias
        else:
            return output

    def __repr__(self):
        return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' \
            + str(self.out_features) + ')'


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super(GCN, self).__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)


class GraphAttentionLayer(nn.Module):
    """Simple GAT layer, similar to https://arxiv.org/abs/1710.10903"""

    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super(GraphAttentionLayer, self).__init__()
        self.dropout = dropout
        self.in_features = in_features
        self.out_features = out_features
        self.alpha = alpha
        self.concat = concat
        self.W = nn.Parameter(torch.empty(size=(in_features, out_features)))
        nn.init.xavier_uniform_(self.W.data, gain=1.414)
        self.a = nn.Parameter(torch.empty(size=(2 * out_features, 1)))
        nn.init.xavier_uniform_(self.a.data, gain=1.414)
        self.leakyrelu = nn.LeakyReLU(self.alpha)

    def forward(self, h, adj):
        Wh = torch.mm(h, self.W)  # h.shape: (N, in_features), Wh.shape: (N, out_features)
        e = self._prepare_attentional_mechanism_input(Wh)
        zero_vec = -9e15 * torch.ones_like(e)
        attention = torch.where(adj > 0, e, zero_vec)
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, Wh)
        if self.concat:
            return F.elu(h_prime)
        else:
            return h_prime

    def _prepare_attentional_mechanism_input(self, Wh):
        Wh1 = torch.matmul(Wh, self.a[:self.out_features, :])
        Wh2 = torch.matmul(Wh, self.a[self.out_features:, :])
        # broadcast add
        e = Wh1 + Wh2.T
        return self.leakyrelu(e)


class GAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
        super(GAT, self).__init__()
        self.dropout = dropout
        self.attentions = [GraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha,
                                               concat=True) for _ in range(nheads)]
        for i, attention in enumerate(self.attentions):
            self.add_module('attention_{}'.format(i), attention)
        self.out_att = GraphAttentionLayer(nhid * nheads, nclass, dropout=dropout, alpha=alpha,
                                           concat=False)

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        x = F.elu(self.out_att(x, adj))
        return F.log_softmax(x, dim=1)


def normalize_adj(adj):
    """D^-1/2 (A + I) D^-1/2"""
    adj = adj + torch.eye(adj.shape[0])
    rowsum = adj.sum(1)
    d_inv_sqrt = torch.pow(rowsum, -0.5).flatten()
    d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0.
    d_mat_inv_sqrt = torch.diag(d_inv_sqrt)
    return d_mat_inv_sqrt @ adj @ d_mat_inv_sqrt


def normalize_features(mx):
    rowsum = mx.sum(1, keepdim=True)
    r_inv = torch.where(rowsum > 0, 1.0 / rowsum, torch.zeros_like(rowsum))
    return mx * r_inv


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


def load_data(n=30, nfeat=12, nclass=3):
    g = rng(0)
    labels = g.integers(0, nclass, size=n)
    same = labels[:, None] == labels[None, :]
    a = (g.uniform(size=(n, n)) < np.where(same, 0.3, 0.05)).astype(np.float32)
    a = np.triu(a, 1)
    a = a + a.T
    features = (g.uniform(size=(n, nfeat)) < 0.3).astype(np.float32)
    features[np.arange(n), labels] += 1.0
    adj = torch.FloatTensor(a)
    features = torch.FloatTensor(features)
    labels = torch.LongTensor(labels)
    idx_train = torch.LongTensor(range(15))
    idx_val = torch.LongTensor(range(15, 22))
    idx_test = torch.LongTensor(range(22, 30))
    return adj, features, labels, idx_train, idx_val, idx_test


def run(name, model, adj, features, labels, idx_train, idx_val, idx_test, epochs=4):
    optimizer = optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    history = []
    for epoch in range(epochs):
        t = time.time()
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        acc_train = accuracy(output[idx_train], labels[idx_train])
        loss_train.backward()
        if epoch == 0:
            record(f"{name}/grad_norms", grad_norms(model))
        optimizer.step()
        model.eval()
        output = model(features, adj)
        loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        acc_val = accuracy(output[idx_val], labels[idx_val])
        history.append([loss_train.item(), acc_train.item(), loss_val.item(), acc_val.item()])
        _ = 'time: {:.4f}s'.format(time.time() - t)
    record(f"{name}/history", history)
    model.eval()
    output = model(features, adj)
    loss_test = F.nll_loss(output[idx_test], labels[idx_test])
    acc_test = accuracy(output[idx_test], labels[idx_test])
    record(f"{name}/test", [loss_test.item(), acc_test.item()])
    record(f"{name}/output", output[:3])


def main():
    np.random.seed(42)
    torch.manual_seed(42)
    adj, features, labels, idx_train, idx_val, idx_test = load_data()
    features = normalize_features(features)
    norm_adj = normalize_adj(adj)
    record("norm_adj", norm_adj[:3, :6])

    gcn = GCN(nfeat=features.shape[1], nhid=16, nclass=int(labels.max()) + 1, dropout=0.0)
    record("gcn/repr", repr(gcn))
    record("gcn/init", init_stats(gcn))
    seed_parameters(gcn, seed=1)
    run("gcn", gcn, norm_adj, features, labels, idx_train, idx_val, idx_test)

    gat = GAT(nfeat=features.shape[1], nhid=8, nclass=int(labels.max()) + 1, dropout=0.0,
              alpha=0.2, nheads=2)
    record("gat/init", init_stats(gat))
    seed_parameters(gat, seed=2)
    run("gat", gat, adj, features, labels, idx_train, idx_val, idx_test)
    finish()


if __name__ == '__main__':
    main()
