"""A DCGAN in the style of PyTorch's examples/dcgan/main.py and its tutorial: ConvTranspose2d
generator and Conv2d discriminator with BatchNorm, weights_init through apply() and
classname.find, BCELoss against torch.full labels, the D step on real and detached fake
batches, the G step, Adam with betas=(0.5, 0.999), and checkpoints of both nets."""

import io
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data

from _record import finish, init_stats, record, rng, seed_parameters

nc = 3
nz = 8
ngf = 8
ndf = 8


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self, ngpu):
        super(Generator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            # input is Z, going into a convolution
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            # state size. (ngf*4) x 4 x 4
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # state size. (ngf*2) x 8 x 8
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh()
            # state size. (nc) x 16 x 16
        )

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super(Discriminator, self).__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(
            # input is (nc) x 16 x 16
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf) x 8 x 8
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # state size. (ndf*2) x 4 x 4
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        output = self.main(input)
        return output.view(-1, 1).squeeze(1)


def main():
    manualSeed = 999
    random.seed(manualSeed)
    torch.manual_seed(manualSeed)
    torch.use_deterministic_algorithms(True)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    ngpu = 1

    images = rng(0).uniform(-1, 1, size=(16, nc, 16, 16)).astype(np.float32)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(images))
    dataloader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=False, num_workers=0)

    netG = Generator(ngpu).to(device)
    netG.apply(weights_init)
    netD = Discriminator(ngpu).to(device)
    netD.apply(weights_init)
    record("init_G", init_stats(netG))
    record("init_D", init_stats(netD))
    seed_parameters(netG, seed=1)
    seed_parameters(netD, seed=2)

    criterion = nn.BCELoss()
    noise_rng = rng(3)
    fixed_noise = torch.from_numpy(noise_rng.normal(size=(4, nz, 1, 1)).astype(np.float32))
    real_label = 1.
    fake_label = 0.
    optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

    G_losses = []
    D_losses = []
    D_x_all = []
    for epoch in range(2):
        for i, data in enumerate(dataloader, 0):
            ############################
            # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
            ###########################
            netD.zero_grad()
            real_cpu = data[0].to(device)
            b_size = real_cpu.size(0)
            label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
            output = netD(real_cpu).view(-1)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()

            noise = torch.from_numpy(
                noise_rng.normal(size=(b_size, nz, 1, 1)).astype(np.float32)).to(device)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach()).view(-1)
            errD_fake = criterion(output, label)
            errD_fake.backward()
            D_G_z1 = output.mean().item()
            errD = errD_real + errD_fake
            optimizerD.step()

            ############################
            # (2) Update G network: maximize log(D(G(z)))
            ###########################
            netG.zero_grad()
            label.fill_(real_label)  # fake labels are real for generator cost
            output = netD(fake).view(-1)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()

            G_losses.append(errG.item())
            D_losses.append(errD.item())
            D_x_all.append([D_x, D_G_z1, D_G_z2])
    record("G_losses", G_losses)
    record("D_losses", D_losses)
    record("D_x", D_x_all)
    record("running_mean", netD.main[3].running_mean)
    record("running_var", netG.main[1].running_var)
    record("num_batches_tracked", netD.main[3].num_batches_tracked.item())

    with torch.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    record("fake", fake[0, 0, :2, :4])
    netG.eval()
    with torch.no_grad():
        record("fake_eval", netG(fixed_noise)[1, 2, 3, :4])

    # checkpoints, as the example saves them each epoch
    buf = io.BytesIO()
    torch.save({'netG': netG.state_dict(), 'netD': netD.state_dict(),
                'optimizerD': optimizerD.state_dict()}, buf)
    buf.seek(0)
    ckpt = torch.load(buf)
    netG2 = Generator(ngpu)
    netG2.load_state_dict(ckpt['netG'])
    netG2.eval()
    with torch.no_grad():
        record("reloaded", netG2(fixed_noise)[1, 2, 3, :4])
    record("optimizer_state_steps", [float(s['step']) for s in ckpt['optimizerD']['state'].values()])
    finish()


if __name__ == '__main__':
    main()
