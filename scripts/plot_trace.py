#!/usr/bin/python3
"""Renders the AI-core timeline of an `npu run --trace` file as a PNG.

One row per AI core, one bar per scheduled tile, one colour per op (node),
however many ops the graph has. Times are modeled device microseconds
(cycles / clock), counted from the start of the run's first op, so the axis
starts at 0 whatever the device's timeline held before the run.

Usage: scripts/plot_trace.py TRACE.json OUT.png [--title TEXT]
Needs matplotlib (Debian: python3-matplotlib, installed by scripts/install-deps.sh);
run it with /usr/bin/python3.
"""
import argparse
import colorsys
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

GOLDEN_RATIO_CONJUGATE = 0.6180339887498949


def load_trace(path):
    """(tiles, op slices, thread names, otherData) of a Chrome trace-event file."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tiles = [e for e in events if e.get("ph") == "X" and e.get("cat") == "tile"]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "op"]
    other = trace.get("otherData", {}) if isinstance(trace, dict) else {}
    return tiles, ops, names, other


def op_colours(ops):
    """A distinct RGB colour per op name, in the order given.

    Up to 20 ops take matplotlib's tab20 palette; beyond, hues step by the
    golden ratio (never repeating) over three lightness levels, so no two ops
    share a colour and neighbours differ.
    """
    if len(ops) <= 20:
        tab20 = matplotlib.colormaps["tab20"]
        return {op: tab20(i)[:3] for i, op in enumerate(ops)}
    colours = {}
    for i, op in enumerate(ops):
        hue = (i * GOLDEN_RATIO_CONJUGATE) % 1.0
        lightness = (0.42, 0.58, 0.72)[i % 3]
        colours[op] = colorsys.hls_to_rgb(hue, lightness, 0.75)
    return colours


def bars(tiles, ops):
    """(core tid, start us, duration us, op name) per tile, run-relative."""
    starts = [e["ts"] for e in ops] or [e["ts"] for e in tiles]
    origin = min(starts) if starts else 0.0
    return [(e["tid"], e["ts"] - origin, e["dur"], e["name"]) for e in tiles]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("png")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)

    tiles, op_slices, names, other = load_trace(args.trace)
    if not tiles:
        print(f"{args.trace}: no tile slices (was the run profiled?)", file=sys.stderr)
        return 1
    cores = sorted({e["tid"] for e in tiles})
    row = {tid: i for i, tid in enumerate(cores)}
    ops = list(dict.fromkeys(e["name"] for e in tiles))  # first-seen order
    colour = op_colours(ops)

    fig, ax = plt.subplots(figsize=(12, max(2.5, 0.28 * len(cores) + 1.5)))
    for tid, start, dur, op in bars(tiles, op_slices):
        ax.broken_barh([(start, max(dur, 1e-6))], (row[tid] - 0.4, 0.8), facecolors=colour[op], edgecolors="none")
    ax.set_yticks(range(len(cores)))
    ax.set_yticklabels([names.get(tid, f"tid {tid}") for tid in cores], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(left=0)
    ax.set_xlabel("modeled device time since the run's first op (us)")
    title = args.title or "AI core timeline ({}, {})".format(other.get("preset", "?"),
                                                             other.get("model_version", "?"))
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[op]) for op in ops]
    columns = 1 + (len(ops) - 1) // 40
    ax.legend(handles, ops, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7 if len(ops) <= 40 else 5,
              frameon=False, ncol=columns)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"{args.png}: {len(tiles)} tiles on {len(cores)} cores, {len(ops)} ops")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
