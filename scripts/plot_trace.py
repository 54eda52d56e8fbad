#!/usr/bin/env python3
"""Renders the AI-core timeline of an `npu run --trace` file as a PNG.

One row per AI core, one bar per scheduled tile, coloured by op. Times are
modeled device microseconds (cycles / clock), as in the trace.

Usage: scripts/plot_trace.py TRACE.json OUT.png [--title TEXT]
Needs matplotlib (Debian: python3-matplotlib); run it with /usr/bin/python3.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def load_tiles(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tiles = [e for e in events if e.get("ph") == "X" and e.get("cat") == "tile"]
    other = trace.get("otherData", {}) if isinstance(trace, dict) else {}
    return tiles, names, other


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("png")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)

    tiles, names, other = load_tiles(args.trace)
    if not tiles:
        print(f"{args.trace}: no tile slices (was the run profiled?)", file=sys.stderr)
        return 1
    cores = sorted({e["tid"] for e in tiles})
    row = {tid: i for i, tid in enumerate(cores)}
    ops = list(dict.fromkeys(e["name"] for e in tiles))  # first-seen order
    cmap = plt.get_cmap("tab20")
    colour = {op: cmap(i % 20) for i, op in enumerate(ops)}

    fig, ax = plt.subplots(figsize=(12, max(2.5, 0.28 * len(cores) + 1.5)))
    for e in tiles:
        ax.broken_barh([(e["ts"], max(e["dur"], 1e-6))], (row[e["tid"]] - 0.4, 0.8),
                       facecolors=colour[e["name"]], edgecolors="none")
    ax.set_yticks(range(len(cores)))
    ax.set_yticklabels([names.get(tid, f"tid {tid}") for tid in cores], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("modeled device time (us)")
    title = args.title or "AI core timeline ({}, {})".format(other.get("preset", "?"),
                                                             other.get("model_version", "?"))
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[op]) for op in ops[:20]]
    ax.legend(handles, ops[:20], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"{args.png}: {len(tiles)} tiles on {len(cores)} cores, {len(ops)} ops")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
