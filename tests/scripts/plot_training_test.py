"""scripts/plot_training.py: reads npu train's metrics CSV, refuses another
file by name, and writes a PNG of several runs."""
import importlib.util
import os
import sys
import tempfile
import unittest

SOURCE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
spec = importlib.util.spec_from_file_location("plot_training", os.path.join(SOURCE, "scripts", "plot_training.py"))
plot_training = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot_training)

HEADER = "epoch,train_loss,val_loss,val_accuracy,loss_scale,skipped_steps,device_time_us,host_time_ms\n"


def write(path, rows):
    with open(path, "w") as f:
        f.write(HEADER)
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


class PlotTrainingTest(unittest.TestCase):
    def test_reads_the_columns(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "one.csv")
            write(path, [(1, 1.5, 0.69, 0.886, 65536, 0, 1938.1, 16), (2, 0.44, 0.28, 0.93, 32768, 1, 1938.1, 22)])
            m = plot_training.load_metrics(path)
            self.assertEqual(m["epoch"], [1.0, 2.0])
            self.assertEqual(m["val_accuracy"], [0.886, 0.93])
            self.assertEqual(m["skipped_steps"], [0.0, 1.0])

    def test_refuses_another_csv_by_name(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "other.csv")
            with open(path, "w") as f:
                f.write("a,b\n1,2\n")
            with self.assertRaisesRegex(ValueError, "other.csv: not an npu train"):
                plot_training.load_metrics(path)
            self.assertEqual(plot_training.main([os.path.join(d, "x.png"), path]), 2)

    def test_writes_a_png_of_several_runs(self):
        with tempfile.TemporaryDirectory() as d:
            a, b, png = os.path.join(d, "one.csv"), os.path.join(d, "four.csv"), os.path.join(d, "curve.png")
            write(a, [(e, 1.0 / e, 1.2 / e, 0.8 + 0.03 * e, 65536, 0, 1938.1, 16) for e in range(1, 6)])
            write(b, [(e, 1.0 / e, 1.2 / e, 0.8 + 0.03 * e, 65536, 0, 2523.6, 34) for e in range(1, 6)])
            self.assertEqual(plot_training.main([png, a, b, "--title", "digits"]), 0)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
