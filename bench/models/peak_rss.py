#!/usr/bin/python3
"""Peak resident memory of a real npu-server process around one model
(issue 13's target: peak RSS of a run <= model bytes x 1.5 + the run's
planned activation bytes + 64 MiB).

usage: peak_rss.py --server build/server/rpc/npu-server --model M.onnx --input M.input.npy
                   [--input-name input] [--runs 5] [-- server flags...]

Starts the server on a free loopback port, registers the model through the
Python client, then runs it. The kernel's high-water mark (VmHWM) is read
after each phase and reset in between (/proc/PID/clear_refs, "5"), so the
registration's peak and the runs' peak are told apart; `met` is the runs'
peak against the budget (the issue's "peak RSS of a run"). One JSON line.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

import npuserve


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--input-name", default="input")
    p.add_argument("--runs", type=int, default=5)
    args, server_flags = p.parse_known_args()
    server_flags = [f for f in server_flags if f != "--"]
    target = f"127.0.0.1:{free_port()}"
    server = subprocess.Popen([args.server, "--listen", target] + server_flags, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    mib = lambda kib: round(kib / 1024, 1)  # noqa: E731
    try:
        client = npuserve.connect(target)
        for _ in range(100):
            try:
                client.health()
                break
            except npuserve.NpuError:
                time.sleep(0.05)
        start = status_kib(server.pid, "VmRSS")
        graph = client.register(args.model)
        registered_peak = status_kib(server.pid, "VmHWM")
        with open(f"/proc/{server.pid}/clear_refs", "w") as f:
            f.write("5")  # the high-water mark starts again from the current RSS
        before_runs = status_kib(server.pid, "VmRSS")
        x = np.load(args.input)
        result = None
        for _ in range(args.runs):
            result = client.run(graph, {args.input_name: x}, profile=True)
        run_peak = status_kib(server.pid, "VmHWM")
        model_bytes = os.path.getsize(args.model)
        arena = result.profile.arena_bytes
        budget = model_bytes * 1.5 + arena + (64 << 20)
        print(json.dumps({
            "bench": "peak_rss", "model": os.path.basename(args.model), "model_mib": mib(model_bytes / 1024),
            "arena_mib": mib(arena / 1024), "start_rss_mib": mib(start), "registration_peak_mib": mib(registered_peak),
            "rss_before_runs_mib": mib(before_runs), "run_peak_mib": mib(run_peak),
            "budget_mib": mib(budget / 1024), "met": run_peak * 1024 <= budget,
            "registration_within_budget": registered_peak * 1024 <= budget}))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    sys.exit(main())
