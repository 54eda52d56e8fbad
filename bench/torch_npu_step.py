#!/usr/bin/python3
"""A training step through torch_npu's modules on the NPU against the server's
own host time for the same step (issue 23's client and transfer overhead).

    PYTHONPATH=build/python bench/torch_npu_step.py --server build/server/rpc/npu-server [--steps 10]

For a small CNN (3x32x32) and resnet18 at 64x64, batch 16, SGD with momentum:
each step's wall time on the client (forward, the loss on the host, backward,
optimizer.step) against the host time the server's profiles report for its
forward and backward runs. The difference is what the package and the
transfers add: the export is paid once, before the timed steps; each timed
step uploads every parameter once (the optimizer changed them), sends the
batch and the outputs' gradients, and receives the outputs and the gradients.
Prints one row per model; the figure of merit is overhead = wall / server - 1.
"""
import argparse
import re
import statistics
import subprocess
import time

import torch
import torchvision

import npuserve
from npuserve.autograd import RemoteModule


def small_cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 10))


def measure(client, name, module, shape, steps):
    torch.manual_seed(0)
    module.train()
    remote = RemoteModule(module, client, profile=True)
    opt = torch.optim.SGD(module.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(*shape)
    labels = torch.randint(0, 10, (shape[0],))
    walls, servers = [], []
    for step in range(steps + 2):  # two warm-up steps: the export and registration, the first plans
        start = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(remote(x), labels)
        loss.backward()
        opt.step()
        wall = time.perf_counter() - start
        if step >= 2:
            walls.append(wall * 1e3)
            servers.append((remote.last_result.profile.host_time_us + remote.last_backward.profile.host_time_us) / 1e3)
    remote.close()
    wall, server = statistics.median(walls), statistics.median(servers)
    print(f"{name:<22} {wall:10.1f} {server:10.1f} {wall / server - 1:9.1%}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    server = subprocess.Popen([args.server, "--listen=127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    try:
        target = re.search(r"listening on (127\.0\.0\.1:\d+)", server.stdout.readline()).group(1)
        with npuserve.connect(target) as client:
            print(f"{'model (batch 16)':<22} {'wall ms':>10} {'server ms':>10} {'overhead':>9}")
            measure(client, "small CNN 3x32x32", small_cnn(), (16, 3, 32, 32), args.steps)
            measure(client, "resnet18 3x64x64", torchvision.models.resnet18(num_classes=10), (16, 3, 64, 64),
                    args.steps)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
