"""Trains a small ResNet-style CNN on random CIFAR-sized data on GPUs, with
torch.cuda.amp mixed precision and DataParallel over the visible GPUs.

    CUDA_VISIBLE_DEVICES=0,1 python train_resnet_amp.py --epochs 2

A sample for `npu migrate` (examples/migrate/README.md): typical GPU habits.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1")
torch.backends.cudnn.benchmark = True


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.blocks = nn.Sequential(Block(32), Block(32))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.blocks(F.relu(self.stem(x)))
        x = self.pool(self.up(x))
        return self.fc(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().cuda()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = GradScaler()
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for step in range(10):
            images = torch.randn(64, 3, 32, 32).cuda(non_blocking=True)
            labels = torch.randint(0, 10, (64,), device=device)
            optimizer.zero_grad()
            with autocast():
                loss = criterion(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        torch.cuda.synchronize()
        print(f"epoch {epoch}: loss {loss.item():.3f}, {torch.cuda.max_memory_allocated() >> 20} MiB on cuda:0")


if __name__ == "__main__":
    main()
