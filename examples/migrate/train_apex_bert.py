"""Fine-tunes a tiny BERT-style encoder with NVIDIA apex: amp at O2 with
dynamic loss scaling and apex's DistributedDataParallel.

Launch (8 GPUs):
    python -m torch.distributed.launch --nproc_per_node=8 train_apex_bert.py --local_rank 0

A sample for `npu migrate` (examples/migrate/README.md).
"""
import argparse

import torch
import torch.nn as nn
from apex import amp
from apex.parallel import DistributedDataParallel

torch.backends.cudnn.deterministic = True
torch.cuda.manual_seed_all(0)


class Encoder(nn.Module):
    def __init__(self, vocab=3000, dim=256, heads=4, classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)
        self.cls = nn.Linear(dim, classes)

    def forward(self, tokens):
        x = self.embed(tokens)
        a, _ = self.attn(x, x, x)
        x = self.norm1(x + a)
        x = self.norm2(x + self.ff(x))
        scores = torch.einsum("bld,d->bl", x, self.cls.weight[0])
        return self.cls(x[:, 0]), scores


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    torch.cuda.set_device(args.local_rank)
    torch.distributed.init_process_group(init_method="env://")
    model = Encoder().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale="dynamic")
    model = DistributedDataParallel(model)
    criterion = nn.CrossEntropyLoss().cuda()
    for step in range(10):
        tokens = torch.randint(0, 3000, (16, 128)).cuda()
        labels = torch.randint(0, 2, (16,)).cuda()
        logits, scores = model(tokens)
        loss = criterion(logits, labels) + 0.0 * scores.mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        if step % 5 == 0 and args.local_rank == 0:
            print(step, loss.item(), torch.cuda.get_device_name())


if __name__ == "__main__":
    main()
