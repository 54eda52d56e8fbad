#!/usr/bin/python3
"""The installable package: scripts/install-python.sh builds the npuserve
wheel into a fresh virtual environment (offline, on Debian's grpcio, protobuf
and numpy), with npuserve-shims (--shims), and that environment's python, run outside the
repository with no PYTHONPATH, imports the installed packages (not
build/python's), runs a graph on a real npu-server and sees its devices
through torch.npu.

Usage: wheel_test.py --server NPU_SERVER --source REPO --work DIR
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

ARGS = None

CLIENT = r'''
import json, sys
import numpy as np
import npuserve
print(json.dumps({"file": npuserve.__file__, "version": npuserve.__version__}))
npu = npuserve.connect(sys.argv[1])
assert npu.health() == "SERVING", npu.health()
graph = {"name": "add", "inputs": [{"name": "a", "dtype": "FLOAT32", "shape": [2]},
                                   {"name": "b", "dtype": "FLOAT32", "shape": [2]}],
         "outputs": ["c"],
         "nodes": [{"name": "add", "opType": "Add", "inputs": ["a", "b"], "outputs": ["c"]}]}
result = npu.run(graph, {"a": np.array([1.5, 2], np.float32), "b": np.array([0.25, -4], np.float32)})
print(json.dumps({"c": result["c"].tolist()}))
import torch, torch_npu
from apex import amp
print(json.dumps({"torch_npu": torch_npu.__file__, "devices": torch.npu.device_count(), "apex": amp.__file__}))
'''


class Wheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.venv = os.path.join(ARGS.work, "wheel-venv")
        shutil.rmtree(cls.venv, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cls.install = subprocess.run([os.path.join(ARGS.source, "scripts", "install-python.sh"), "--shims", cls.venv],
                                     capture_output=True, text=True, env=env, timeout=240)

    def test_installs_offline(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)
        self.assertRegex(self.install.stdout, r"npuserve \d+\.\d+\.\d+ installed in ")
        self.assertIn("(npuserve-shims) installed", self.install.stdout)

    def test_the_installed_package_runs_a_graph(self):
        self.assertEqual(self.install.returncode, 0, self.install.stderr)
        server = subprocess.Popen([ARGS.server, "--listen=127.0.0.1:0", "--threads=1"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            m = re.search(r"listening on (127\.0\.0\.1:\d+)", server.stdout.readline())
            self.assertIsNotNone(m, "npu-server did not start")
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NPUSERVE_STUBS")}
            env["NPUSERVE_TARGET"] = m.group(1)
            with tempfile.TemporaryDirectory() as cwd:  # nothing of the repository on sys.path
                out = subprocess.run([os.path.join(self.venv, "bin", "python"), "-c", CLIENT, m.group(1)],
                                     capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            import json
            lines = [json.loads(l) for l in out.stdout.splitlines()]
            self.assertTrue(lines[0]["file"].startswith(os.path.realpath(self.venv)) or
                            lines[0]["file"].startswith(self.venv), lines[0]["file"])
            with open(os.path.join(ARGS.source, "CMakeLists.txt"), encoding="utf-8") as f:
                version = re.search(r"project\(npuserve VERSION ([0-9.]+)", f.read()).group(1)
            self.assertEqual(lines[0]["version"], version)
            self.assertEqual(lines[1]["c"], [1.75, -2.0])
            self.assertTrue(lines[2]["torch_npu"].startswith(self.venv), lines[2])  # npuserve-shims, installed
            self.assertTrue(lines[2]["apex"].startswith(self.venv), lines[2])
            self.assertEqual(lines[2]["devices"], 1)
        finally:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
