#!/usr/bin/python3
"""Draws `npu compare`'s results: Cosine and MaxRelativeErr of every compared
output along the graph (topological order), the verdicts coloured, the first
diverging node (diff_analyze.json) marked.

    scripts/plot_compare.py DIR/compare_result.csv DIR/diff_analyze.json OUT.png

`npu compare` runs it itself (with Debian's python3 and python3-matplotlib).
"""
import argparse
import csv
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"pass": "#2e7d32", "warning": "#f9a825", "error": "#c62828"}


def number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("analysis")
    ap.add_argument("png")
    a = ap.parse_args()
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(a.analysis) as f:
        analysis = json.load(f)
    first = (analysis.get("first_diverging_node") or {}).get("name")

    xs = list(range(len(rows)))
    cosine = [number(r["Cosine"]) for r in rows]
    rel = [number(r["MaxRelativeErr"]) for r in rows]
    colours = [COLOURS.get(r["Result"], "#555555") for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(max(6.0, min(24.0, 0.25 * len(rows) + 4)), 6))
    top.scatter([x for x, c in zip(xs, cosine) if c is not None], [c for c in cosine if c is not None],
                c=[k for k, c in zip(colours, cosine) if c is not None], s=18, zorder=3)
    top.plot(xs, [c if c is not None else float("nan") for c in cosine], color="#999999", lw=0.8)
    top.axhline(0.99, color=COLOURS["error"], lw=0.6, ls="--")
    top.set_ylabel("Cosine")
    positive = [(x, r) for x, r in zip(xs, rel) if r is not None and r > 0]
    bottom.scatter([x for x, _ in positive], [r for _, r in positive],
                   c=[colours[x] for x, _ in positive], s=18, zorder=3)
    if positive:
        bottom.set_yscale("log")
    bottom.set_ylabel("MaxRelativeErr")
    bottom.set_xlabel("node output, in topological order")
    for x, r in enumerate(rows):
        if first is not None and r["NPU Name"].startswith(first + ".output."):
            for ax in (top, bottom):
                ax.axvline(x, color=COLOURS["error"], lw=1.2)
            top.annotate(f"first diverging: {first}", (x, 1.0), xytext=(4, -12), textcoords="offset points",
                         fontsize=8, color=COLOURS["error"])
            break
    names = [r["NPU Name"].rsplit(".output.", 1)[0] for r in rows]
    if len(rows) <= 40:
        bottom.set_xticks(xs)
        bottom.set_xticklabels(names, rotation=90, fontsize=6)
    top.set_title(f"npu compare: {analysis.get('preset', '')} ({analysis.get('float_mode', '')}) against the "
                  f"{analysis.get('bench', 'fp32')} bench: {analysis.get('error', 0):g} error, "
                  f"{analysis.get('warning', 0):g} warning, {analysis.get('pass', 0):g} pass", fontsize=9)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
