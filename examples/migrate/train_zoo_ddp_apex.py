"""A GPU training script in the style of a ModelZoo sample: argparse, one
process per GPU (torch.multiprocessing.spawn, DistributedDataParallel over
nccl with a tcp:// rendezvous), apex O2 with a static loss scale of 128,
"cuda:N" device strings and torch.cuda.synchronize() at the end of each epoch.

It trains a small CNN on a synthetic four-class image task (oriented bars in
noise, generated from a seed, so no download) and prints each epoch's mean
loss and validation accuracy on rank 0.

    python train_zoo_ddp_apex.py --epochs 6            # on two GPUs
    python train_zoo_ddp_apex.py --epochs 6 --cpu      # its CPU / gloo / fp32 form, for reference

examples/migrate/README.md runs it on npu-server twice: converted by `npu
migrate`, and unchanged with torch_npu's transfer_to_npu prepended.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    parser = argparse.ArgumentParser(description="ModelZoo-style DDP + apex training")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32, help="per process")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--port", type=int, default=29517)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu", action="store_true", help="CPU, gloo, fp32, no apex: the reference form")
    return parser.parse_args()


class Net(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(16 * 4 * 4, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def make_data(count, seed):
    """Oriented bars (horizontal, vertical, two diagonals) at random places, in noise."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 4, (count,), generator=g)
    images = torch.randn(count, 1, 16, 16, generator=g) * 0.8
    pos = torch.randint(3, 13, (count, 2), generator=g)
    for i in range(count):
        r, c = pos[i].tolist()
        for t in range(-3, 4):
            rr, cc = [(r, c + t), (r + t, c), (r + t, c + t), (r + t, c - t)][labels[i]]
            images[i, 0, rr % 16, cc % 16] += 2.0
    return images, labels


def main_worker(rank, args):
    backend = "gloo" if args.cpu else "nccl"
    dist.init_process_group(backend=backend, init_method=f"tcp://127.0.0.1:{args.port}",
                            world_size=args.world_size, rank=rank)
    torch.manual_seed(args.seed)
    device = torch.device("cpu") if args.cpu else torch.device(f"cuda:{rank}")
    if not args.cpu:
        torch.cuda.set_device(device)
    model = Net().to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    if not args.cpu:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
        model = DDP(model, device_ids=[rank])
    else:
        model = DDP(model)

    train_x, train_y = make_data(2048, seed=1)
    val_x, val_y = make_data(512, seed=2)
    sampler = torch.utils.data.distributed.DistributedSampler(
        torch.utils.data.TensorDataset(train_x, train_y), num_replicas=args.world_size, rank=rank, seed=args.seed)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_x, train_y),
                                         batch_size=args.batch_size, sampler=sampler, drop_last=True)
    for epoch in range(args.epochs):
        start = time.time()
        model.train()
        sampler.set_epoch(epoch)
        total, steps = 0.0, 0
        for images, target in loader:
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(images)
            loss = criterion(output, target)
            optimizer.zero_grad()
            if args.cpu:
                loss.backward()
            else:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            optimizer.step()
            total += loss.item()
            steps += 1
        if not args.cpu:
            torch.cuda.synchronize()
        model.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(val_x), 128):
                pred = model(val_x[i:i + 128].to(device)).argmax(1)
                correct += (pred.cpu() == val_y[i:i + 128]).sum().item()
        if rank == 0:
            print(f"epoch {epoch} loss {total / steps:.4f} val_acc {correct / len(val_x):.4f} "
                  f"time {time.time() - start:.1f}s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    args = parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.spawn(main_worker, args=(args,), nprocs=args.world_size)
