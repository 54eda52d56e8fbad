"""scripts/plot_trace.py: one colour per op however many, a run-relative axis,
and a PNG from a real `npu run --trace` file layout."""
import importlib.util
import json
import os
import sys
import tempfile
import unittest

SOURCE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
spec = importlib.util.spec_from_file_location("plot_trace", os.path.join(SOURCE, "scripts", "plot_trace.py"))
plot_trace = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot_trace)


def synthetic_trace(ops, origin_us):
    """`ops` nodes, one tile each on cores 0..3, starting at `origin_us` on the device timeline."""
    events = [{"ph": "M", "name": "thread_name", "tid": 1 + 8 * c, "args": {"name": f"core {c} (ai_core)"}}
              for c in range(4)]
    for i in range(ops):
        ts = origin_us + 2.0 * i
        events.append({"ph": "X", "cat": "op", "name": f"node{i}", "tid": 0, "ts": ts, "dur": 2.0})
        events.append({"ph": "X", "cat": "tile", "name": f"node{i}", "tid": 1 + 8 * (i % 4), "ts": ts, "dur": 1.5})
    return {"otherData": {"preset": "ascend910", "model_version": "test"}, "traceEvents": events}


class PlotTraceTest(unittest.TestCase):
    def test_every_op_gets_its_own_colour(self):
        for n in (3, 20, 21, 57, 300):
            ops = [f"op{i}" for i in range(n)]
            colours = plot_trace.op_colours(ops)
            self.assertEqual(len(set(colours.values())), n, f"{n} ops")

    def test_axis_counts_from_the_runs_first_op(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            with open(path, "w") as f:
                json.dump(synthetic_trace(5, origin_us=123456.0), f)
            tiles, ops, _, _ = plot_trace.load_trace(path)
            starts = sorted(start for _, start, _, _ in plot_trace.bars(tiles, ops))
            self.assertEqual(starts, [0.0, 2.0, 4.0, 6.0, 8.0])

    def test_writes_a_png(self):
        with tempfile.TemporaryDirectory() as d:
            trace, png = os.path.join(d, "trace.json"), os.path.join(d, "timeline.png")
            with open(trace, "w") as f:
                json.dump(synthetic_trace(25, origin_us=10.0), f)
            self.assertEqual(plot_trace.main([trace, png]), 0)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
