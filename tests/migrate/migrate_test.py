"""`npu migrate` on the sample GPU training scripts in examples/migrate/.

Usage (ctest does this): NPU_CLI=build/client/npu NPU_OPS_DOC=build/server/graph/npu-ops-doc
    NPU_SOURCE=. /usr/bin/python3 migrate_test.py
The expected rows are written by hand from the samples' text; the server's op
list is checked against the registry's own generator (npu-ops-doc).
"""
import ast
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("NPU_SOURCE", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
NPU = os.environ.get("NPU_CLI", os.path.join(SOURCE, "build", "client", "npu"))
OPS_DOC = os.environ.get("NPU_OPS_DOC", os.path.join(SOURCE, "build", "server", "graph", "npu-ops-doc"))
SAMPLES = ("train_resnet_amp.py", "train_ddp_lstm.py", "train_apex_bert.py")


def sample(name):
    return os.path.join(SOURCE, "examples", "migrate", name)


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def run_migrate(*args):
    return subprocess.run([NPU, "migrate", *args], capture_output=True, text=True)


class Samples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="npu_migrate_")
        cls.result = run_migrate(*[sample(s) for s in SAMPLES], "--out", cls.out)
        cls.changes = read_csv(os.path.join(cls.out, "change_list.csv"))
        cls.unsupported = read_csv(os.path.join(cls.out, "unsupported_op.csv"))

    def rows(self, file, line):
        return [r for r in self.changes if r["file"] == file and int(r["line"]) == line]

    def expect(self, file, line, category, original, converted, applied=True):
        found = [r for r in self.rows(file, line) if r["original"] == original]
        self.assertEqual(len(found), 1, f"{file}:{line} {original!r}: {self.rows(file, line)}")
        r = found[0]
        self.assertEqual((r["category"], r["converted"], r["applied"]),
                         (category, converted, "yes" if applied else "no"), f"{file}:{line}")
        self.assertTrue(r["note"], f"{file}:{line} has no note")

    def test_exit_status_and_outputs(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        for name in SAMPLES + ("change_list.csv", "unsupported_op.csv"):
            self.assertTrue(os.path.isfile(os.path.join(self.out, name)), name)
        self.assertEqual(list(self.changes[0]),
                         ["file", "line", "column", "category", "original", "converted", "applied", "note"])
        self.assertIn("train_ddp_lstm.py: ", self.result.stdout)

    def test_device_strings_and_calls(self):
        f = "train_resnet_amp.py"
        self.expect(f, 52, "device", '"cuda"', '"npu"')
        self.expect(f, 52, "device", "torch.cuda.is_available()", "torch.npu.is_available()")
        self.expect(f, 53, "device", "Net().cuda()", "Net().npu()")
        self.expect(f, 61, "device", "torch.randn(64, 3, 32, 32).cuda(non_blocking=True)",
                    "torch.randn(64, 3, 32, 32).npu(non_blocking=True)")
        self.expect(f, 69, "device", "torch.cuda.synchronize()", "torch.npu.synchronize()")
        self.expect(f, 16, "device", '"CUDA_VISIBLE_DEVICES"', '"ASCEND_RT_VISIBLE_DEVICES"')
        self.expect("train_ddp_lstm.py", 40, "device", 'f"cuda:{rank}"', 'f"npu:{rank}"')
        self.expect("train_ddp_lstm.py", 35, "device", "torch.cuda.set_device(rank)", "torch.npu.set_device(rank)")
        self.expect("train_apex_bert.py", 49, "device", "nn.CrossEntropyLoss().cuda()", "nn.CrossEntropyLoss().npu()")

    def test_torch_npu_is_imported_after_torch(self):
        for name in SAMPLES:
            with open(sample(name), encoding="utf-8") as f:
                at = f.read().splitlines().index("import torch") + 1
            self.expect(name, at + 1, "import", "import torch", "import torch_npu")
            with open(os.path.join(self.out, name), encoding="utf-8") as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[at - 1:at + 1],
                             ["import torch", "import torch_npu  # noqa: F401  (added by npu migrate)"])

    def test_distributed(self):
        self.expect("train_ddp_lstm.py", 34, "distributed", '"nccl"', '"hccl"')
        self.expect("train_resnet_amp.py", 55, "distributed", "nn.DataParallel(model)",
                    "torch.nn.parallel.DistributedDataParallel(model)")
        self.expect("train_apex_bert.py", 44, "distributed", 'torch.distributed.init_process_group(init_method="env://")',
                    'torch.distributed.init_process_group(backend="hccl", init_method="env://")')
        nccl_env = self.rows("train_ddp_lstm.py", 17)
        self.assertEqual([(r["category"], r["applied"]) for r in nccl_env], [("distributed", "no")])
        self.assertIn("HCCL_", nccl_env[0]["note"])
        ddp = self.rows("train_resnet_amp.py", 55)[0]["note"]
        for needed in ("init_process_group(backend=\"hccl\")", "torchrun", "local_rank"):
            self.assertIn(needed, ddp)

    def test_amp_and_loss_scaling(self):
        self.expect("train_resnet_amp.py", 14, "amp", "from torch.cuda.amp import GradScaler, autocast",
                    "from torch.npu.amp import GradScaler, autocast")
        scaler = self.rows("train_resnet_amp.py", 57)
        self.assertEqual(len(scaler), 1)
        self.assertIn("65504", scaler[0]["note"])
        init = self.rows("train_apex_bert.py", 47)
        self.assertEqual(len(init), 1)
        self.assertIn("opt_level O2", init[0]["note"])
        self.assertIn("combine_grad=True", init[0]["note"])
        self.assertEqual(init[0]["applied"], "no")
        self.assertEqual([r["category"] for r in self.rows("train_apex_bert.py", 13)], ["amp"])

    def test_launch_lines_with_affinity_hints(self):
        self.expect("train_resnet_amp.py", 4, "launch", "CUDA_VISIBLE_DEVICES=0,1 python train_resnet_amp.py --epochs 2",
                    "ASCEND_RT_VISIBLE_DEVICES=0,1 python train_resnet_amp.py --epochs 2")
        self.expect("train_apex_bert.py", 5, "launch",
                    "python -m torch.distributed.launch --nproc_per_node=8 train_apex_bert.py --local_rank 0",
                    "torchrun --nproc_per_node=8 train_apex_bert.py --local_rank 0")
        self.expect("train_ddp_lstm.py", 4, "launch", "torchrun --nproc_per_node=8 train_ddp_lstm.py",
                    "torchrun --nproc_per_node=8 train_ddp_lstm.py", applied=False)
        for r in self.changes:
            if r["category"] == "launch" and r["original"].startswith(("torchrun", "python", "CUDA")):
                self.assertIn("taskset -c", r["note"], r)
        self.assertEqual(self.rows("train_ddp_lstm.py", 59), [], "a comment naming torchrun is no launch line")

    def test_cudnn_is_a_note(self):
        self.assertEqual([(r["category"], r["applied"]) for r in self.rows("train_resnet_amp.py", 17)],
                         [("note", "no")])

    def test_unsupported_ops_by_the_servers_list(self):
        found = {(r["file"], int(r["line"]), r["api"], r["missing_ops"]) for r in self.unsupported}
        # Every op the samples call runs on the server now (SoftmaxCrossEntropyLoss for training, LSTM, Einsum,
        # TopK, CumSum, Resize: issue 12); test_another_op_list_changes_the_report checks a list that lacks some.
        self.assertEqual(found, set())

    def test_the_converted_copies_are_the_originals_with_the_applied_changes(self):
        for name in SAMPLES:
            with open(sample(name), encoding="utf-8") as f:
                original = f.read().splitlines()
            with open(os.path.join(self.out, name), encoding="utf-8") as f:
                converted_text = f.read()
            ast.parse(converted_text)
            converted = [l for l in converted_text.splitlines() if "(added by npu migrate)" not in l]
            self.assertEqual(len(converted), len(original), name)
            changed = {i + 1 for i, (a, b) in enumerate(zip(original, converted)) if a != b}
            applied = {int(r["line"]) for r in self.changes if r["file"] == name and r["applied"] == "yes"
                       and r["category"] != "import"}
            self.assertEqual(changed, applied, name)
            # No GPU-only code is left (prose in docstrings may still say "GPU").
            for node in ast.walk(ast.parse(converted_text)):
                if isinstance(node, ast.Attribute):
                    self.assertNotIn(node.attr, ("cuda", "DataParallel"), f"{name}:{node.lineno}")
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value:
                    self.assertNotIn(node.value, ("cuda", "nccl", "CUDA_VISIBLE_DEVICES"), f"{name}:{node.lineno}")


class OpList(unittest.TestCase):
    def test_docs_ops_md_is_the_registrys_list(self):
        sys.path.insert(0, os.path.join(SOURCE, "client", "migrate"))
        from npumigrate.supported_ops import read_supported_ops
        table = subprocess.run([OPS_DOC], capture_output=True, text=True, check=True).stdout
        registry = {line.split("|")[1].strip() for line in table.splitlines()
                    if line.startswith("| ") and not line.startswith("| Op ")}
        self.assertIn("MatMul", registry)
        self.assertEqual(read_supported_ops(os.path.join(SOURCE, "docs", "ops.md")), registry)

    def test_another_op_list_changes_the_report(self):
        with tempfile.TemporaryDirectory() as d:
            ops = os.path.join(d, "ops.md")
            with open(ops, "w") as f:  # a server without Conv
                f.write("<!-- BEGIN npu-ops-doc -->\n| Op | dtypes |\n|---|---|\n| Relu | FLOAT16 |\n"
                        "<!-- END npu-ops-doc -->\n")
            result = run_migrate(sample("train_resnet_amp.py"), "--out", d, "--ops", ops)
            self.assertEqual(result.returncode, 0, result.stderr)
            apis = [r["api"] for r in read_csv(os.path.join(d, "unsupported_op.csv"))]
            self.assertIn("torch.nn.Conv2d", apis)
            self.assertNotIn("torch.nn.functional.relu", apis)


class Errors(unittest.TestCase):
    def test_bad_input_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as d:
            broken = os.path.join(d, "broken.py")
            with open(broken, "w") as f:
                f.write("import torch\nx = torch.zeros(3).cuda(\n")
            for args, message in (([broken], "broken.py:"), ([os.path.join(d, "absent.py")], "cannot read"),
                                  ([], "required")):
                result = run_migrate(*args, "--out", d)
                self.assertEqual(result.returncode, 2, result)
                self.assertIn(message, result.stderr)

    def test_non_ascii_text_before_a_change(self):
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "s.py")
            with open(script, "w", encoding="utf-8") as f:
                f.write('import torch\nprint("données → GPU", torch.zeros(2).cuda(), "cuda")\n')
            self.assertEqual(run_migrate(script, "--out", os.path.join(d, "out")).returncode, 0)
            with open(os.path.join(d, "out", "s.py"), encoding="utf-8") as f:
                self.assertEqual(f.read().splitlines()[2], 'print("données → GPU", torch.zeros(2).npu(), "npu")')


if __name__ == "__main__":
    unittest.main(verbosity=2)
