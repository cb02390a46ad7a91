"""Image classification in the style of torchvision's ResNet and the CIFAR training scripts
built on it: BasicBlock and Bottleneck with downsample, kaiming_normal_ init and zero-init
of the last BatchNorm in each block, SGD with Nesterov momentum and weight decay, a
MultiStepLR then CosineAnnealingLR schedule, label smoothing, an EMA of the weights with
torch.optim.swa_utils.AveragedModel, update_bn, SWALR, accuracy with argmax/eq, and the
random crop and flip augmentation done in NumPy (so both libraries see the same images)."""

import copy
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR, MultiStepLR
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

from _record import finish, grad_norms, init_stats, record, rng, seed_parameters


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64,
                 dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10, zero_init_residual=False, width=8):
        super().__init__()
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = width
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, width * 2, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        norm_layer = self._norm_layer
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )
        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample, self.groups,
                            self.base_width, self.dilation, norm_layer))
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x

    def forward(self, x):
        return self._forward_impl(x)


def augment(batch, g):
    """RandomCrop(16, padding=2) and RandomHorizontalFlip, on a NumPy batch."""
    n = batch.shape[0]
    padded = np.pad(batch, ((0, 0), (0, 0), (2, 2), (2, 2)))
    out = np.empty_like(batch)
    for i in range(n):
        dx, dy = g.integers(0, 5, size=2)
        img = padded[i, :, dy:dy + 16, dx:dx + 16]
        out[i] = img[:, :, ::-1] if g.uniform() < 0.5 else img
    return out


def train(model, loader, optimizer, criterion, g, ema=None):
    model.train()
    losses, correct = [], 0
    for batch_idx, (data, target) in enumerate(loader):
        data = torch.from_numpy(augment(data.numpy(), g))
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        if ema is not None:
            ema.update_parameters(model)
        losses.append(loss.item())
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
    return losses, correct


def test(model, loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            test_loss += F.cross_entropy(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(loader.dataset)
    return test_loss, correct


def main():
    torch.manual_seed(0)
    g = rng(0)
    x = g.normal(size=(32, 3, 16, 16)).astype(np.float32)
    y = g.integers(0, 10, size=32)
    train_set = TensorDataset(torch.from_numpy(x[:24]), torch.from_numpy(y[:24]))
    test_set = TensorDataset(torch.from_numpy(x[24:]), torch.from_numpy(y[24:]))
    train_loader = DataLoader(train_set, batch_size=8, shuffle=False, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=8)

    for name, block, layers in (("basic", BasicBlock, [1, 1]), ("bottleneck", Bottleneck, [1, 1])):
        model = ResNet(block, layers, zero_init_residual=True)
        record(f"{name}/init", init_stats(model))
        record(f"{name}/zero_init", [float(m.weight.abs().sum()) for m in model.modules()
                                     if isinstance(m, nn.BatchNorm2d)])
        seed_parameters(model, seed=1)
        criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                    weight_decay=5e-4)
        scheduler = MultiStepLR(optimizer, milestones=[1], gamma=0.5)
        ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
        history = []
        for epoch in range(2):
            start = time.time()
            losses, correct = train(model, train_loader, optimizer, criterion, g, ema)
            scheduler.step()
            history.append([losses, correct, scheduler.get_last_lr()[0]])
            _ = time.time() - start
        record(f"{name}/history", history)
        record(f"{name}/test", test(model, test_loader))
        record(f"{name}/ema_n", int(ema.n_averaged))
        update_bn(train_loader, ema)
        record(f"{name}/ema_test", test(ema, test_loader))
        record(f"{name}/ema_bn", ema.module.bn1.running_var[:4])

        # SWA over a cosine schedule, on a copy
        swa_model = AveragedModel(copy.deepcopy(model))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        cosine = CosineAnnealingLR(optimizer, T_max=4)
        swa_scheduler = SWALR(optimizer, swa_lr=0.01, anneal_epochs=2, anneal_strategy="cos")
        lrs = []
        for epoch in range(3):
            train(model, train_loader, optimizer, criterion, g)
            if epoch >= 1:
                swa_model.update_parameters(model)
                swa_scheduler.step()
            else:
                cosine.step()
            lrs.append(optimizer.param_groups[0]["lr"])
        record(f"{name}/swa_lrs", lrs)
        record(f"{name}/swa_fc", swa_model.module.fc.bias[:4])
        # the backward through every layer at parameters drawn afresh: after 15 momentum
        # steps the trained weights carry round-off amplified by training (one of XLA:CPU's
        # code generators gave gradient norms 10% from PyTorch's on one CPU, the other
        # 1e-7), which says nothing of the backward itself
        seed_parameters(model, seed=2)
        optimizer.zero_grad()
        criterion(model(torch.from_numpy(x[:8])), torch.from_numpy(y[:8])).backward()
        record(f"{name}/grad_norms", grad_norms(model))
    finish()


if __name__ == "__main__":
    main()
