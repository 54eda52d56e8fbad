"""Trains an LSTM sequence tagger with DistributedDataParallel over NCCL, one
process per GPU.

    torchrun --nproc_per_node=8 train_ddp_lstm.py
    # or: python -m torch.distributed.launch --nproc_per_node=8 --use_env train_ddp_lstm.py

A sample for `npu migrate` (examples/migrate/README.md).
"""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ["NCCL_DEBUG"] = "INFO"


class Tagger(nn.Module):
    def __init__(self, vocab=1000, dim=128, tags=17):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, tags)

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        return self.head(self.norm(h))


def setup(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)


def train(rank, world_size):
    setup(rank, world_size)
    device = f"cuda:{rank}"
    model = DDP(Tagger().to(device), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(20):
        tokens = torch.randint(0, 1000, (32, 50), device=device)
        tags = torch.randint(0, 17, (32, 50), device=device)
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tags.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        best = torch.topk(logits.detach(), k=3, dim=-1).indices
        running = loss.detach().reshape(1).cumsum(0)
        if rank == 0 and step % 5 == 0:
            print(step, running.item(), best.shape, torch.cuda.memory_allocated(rank))
    dist.destroy_process_group()


def main():
    if "LOCAL_RANK" in os.environ:  # started by torchrun
        train(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]))
    else:
        world_size = torch.cuda.device_count()
        mp.spawn(train, args=(world_size,), nprocs=world_size)


if __name__ == "__main__":
    main()
