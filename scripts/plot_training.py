#!/usr/bin/python3
"""Plots the curves of `npu train --metrics-csv` files as a PNG: train and
validation loss (left), validation accuracy (right), per epoch, one line style
per file (say, 1 device against 4, O0 against O2).

Usage: scripts/plot_training.py OUT.png METRICS.csv [METRICS.csv ...] [--title TEXT]
Needs matplotlib (Debian: python3-matplotlib, installed by scripts/install-deps.sh);
run it with /usr/bin/python3.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = ["epoch", "train_loss", "val_loss", "val_accuracy", "loss_scale", "skipped_steps", "device_time_us",
           "host_time_ms"]


def load_metrics(path):
    """The CSV's columns as lists of floats, by name; ValueError names a file that is not npu train's."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != COLUMNS:
        raise ValueError(f"{path}: not an npu train --metrics-csv file (header {rows[0] if rows else 'missing'})")
    return {name: [float(r[i]) for r in rows[1:]] for i, name in enumerate(COLUMNS)}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("png")
    p.add_argument("csv", nargs="+")
    p.add_argument("--title", default="npu train")
    args = p.parse_args(argv)
    try:
        runs = [(os.path.splitext(os.path.basename(path))[0], load_metrics(path)) for path in args.csv]
    except (OSError, ValueError) as e:
        print(f"plot_training: {e}", file=sys.stderr)
        return 2
    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(11, 4))
    for name, m in runs:
        line, = loss_ax.plot(m["epoch"], m["train_loss"], marker="o", label=f"{name} train")
        loss_ax.plot(m["epoch"], m["val_loss"], marker="s", linestyle="--", color=line.get_color(), label=f"{name} val")
        acc_ax.plot(m["epoch"], m["val_accuracy"], marker="o", color=line.get_color(), label=name)
    loss_ax.set(xlabel="epoch", ylabel="loss", title="loss")
    acc_ax.set(xlabel="epoch", ylabel="validation accuracy", title="validation accuracy")
    for ax in (loss_ax, acc_ax):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
