#!/usr/bin/python3
"""torch_npu on npu-server (client/python-shims): torch.npu's device API
against a real server with two devices, the npu device in torch (strings,
torch.device, .npu()/.to() on tensors, factories), modules whose forward runs
on the server (against torch on the host), transfer_to_npu on an unchanged
CUDA-style snippet, hccl over gloo between two processes, and GradScaler's
arithmetic against torch.cuda.amp.GradScaler's documented defaults.

Usage: torch_npu_test.py --server NPU_SERVER   (PYTHONPATH=build/python)
"""
import argparse
import inspect
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest

import torch

ARGS = None
SERVER = None


def start_server(*flags):
    process = subprocess.Popen([ARGS.server, "--listen=127.0.0.1:0", "--threads=1", *flags], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    m = re.search(r"listening on (127\.0\.0\.1:\d+)", process.stdout.readline())
    if not m:
        process.kill()
        raise RuntimeError(f"npu-server did not start: {process.stderr.read()}")
    return process, m.group(1)


def run_script(source, target, timeout=120):
    """`source` as a script file (torch.multiprocessing.spawn re-imports it) run against `target`."""
    env = dict(os.environ, NPUSERVE_TARGET=target)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "script.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(source))
        return subprocess.run([sys.executable, path], capture_output=True, text=True, env=env, timeout=timeout)


def setUpModule():
    global SERVER
    SERVER = start_server("--devices=2")
    os.environ["NPUSERVE_TARGET"] = SERVER[1]


def tearDownModule():
    SERVER[0].send_signal(signal.SIGTERM)
    SERVER[0].communicate(timeout=30)


class Devices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch_npu  # noqa: F401
        cls.npu = torch.npu

    def test_the_servers_devices(self):
        self.assertTrue(self.npu.is_available())
        self.assertEqual(self.npu.device_count(), 2)
        self.assertEqual(self.npu.get_device_name(0), "Ascend910")
        self.assertEqual(self.npu.get_device_properties("npu:1").id, "npu:1")

    def test_set_device_and_current_device(self):
        for spelling, index in (("npu:1", 1), (0, 0), (torch.device("npu", 1), 1), ("npu:0", 0)):
            self.npu.set_device(spelling)
            self.assertEqual(self.npu.current_device(), index, spelling)
        with self.assertRaisesRegex(RuntimeError, r"npu:5 does not exist: the server at .* has 2 devices"):
            self.npu.set_device("npu:5")
        with self.assertRaisesRegex(ValueError, r"'gpu:0' is not an npu device"):
            self.npu.set_device("gpu:0")
        with self.npu.device(1):
            self.assertEqual(self.npu.current_device(), 1)
        self.assertEqual(self.npu.current_device(), 0)

    def test_synchronize_and_memory(self):
        self.assertIsNone(self.npu.synchronize())
        self.assertIsNone(self.npu.synchronize("npu:1"))
        import npuserve
        client = npuserve.connect(SERVER[1])
        before = self.npu.memory_allocated(1)
        handle = client.upload(torch.zeros(1 << 16), device="npu:1")  # 256 KiB on npu:1
        try:
            self.assertGreaterEqual(self.npu.memory_allocated(1) - before, 1 << 18)
            self.assertGreaterEqual(self.npu.max_memory_allocated(1), before + (1 << 18))
        finally:
            client.free(handle)
            client.close()
        self.assertEqual(self.npu.memory_allocated(1), before)

    def test_device_objects_and_strings(self):
        d = torch.device("npu", 1)
        self.assertIsInstance(d, torch.device)
        self.assertIsInstance(torch.device("cpu"), torch.device)
        self.assertEqual((d.type, d.index, str(d)), ("npu", 1, "npu:1"))
        self.assertEqual(torch.device("npu:1"), d)
        self.assertEqual(str(torch.device("cpu")), "cpu")
        x = torch.arange(6.0, device="npu").reshape(2, 3)
        self.assertEqual(x.device.type, "cpu")  # a CPU tensor the next remote call uses
        self.assertIs(x.npu(), x)
        self.assertTrue(torch.equal(x.to("npu:1"), x))
        self.assertEqual(x.to("npu", torch.float16).dtype, torch.float16)
        with self.assertRaisesRegex(RuntimeError, "npu:3 does not exist"):
            x.to("npu:3")
        with self.assertRaisesRegex(RuntimeError, "npu:2 does not exist"):
            torch.zeros(2, device=torch.device("npu", 2))


def small_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 4)).eval()


class Modules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch_npu  # noqa: F401

    def stats_runs(self):
        import npuserve
        with npuserve.connect(SERVER[1]) as client:
            return client.stats().runs_total

    def assert_close_to_fp16_cube(self, got, want):
        # The Cube multiplies fp16 operands with fp32 sums: per element about
        # 2^-11 of the sum of |products|, bounded here by the output's scale.
        self.assertLessEqual((got - want).abs().max().item(), 4e-3 * max(1.0, want.abs().max().item()))

    def test_forward_runs_on_the_server(self):
        net = small_cnn()
        x = torch.randn(2, 3, 8, 8)
        with torch.no_grad():
            want = net(x)
        runs = self.stats_runs()
        self.assertIs(net.npu(), net)
        got = net(x)
        self.assertGreater(self.stats_runs(), runs)
        self.assertIsInstance(got, torch.Tensor)
        self.assertEqual(got.shape, want.shape)
        self.assert_close_to_fp16_cube(got, want)
        self.assertFalse(torch.equal(got, want))  # fp16 operands, not the host's fp32 arithmetic

    def test_new_parameters_make_a_new_export(self):
        net = small_cnn().to("npu:1")
        x = torch.randn(3, 3, 8, 8)
        net(x)
        with torch.no_grad():
            net[4].weight.mul_(-2.0)
        got = net(x)
        with torch.no_grad():
            want = net.cpu()(x)
        self.assert_close_to_fp16_cube(got, want)

    def test_hooks_on_the_module_fire_around_the_remote_run(self):
        net = small_cnn().npu()
        seen = []
        net.register_forward_hook(lambda m, inputs, output: seen.append(output.shape))
        net(torch.randn(1, 3, 8, 8))
        self.assertEqual(seen, [torch.Size([1, 4])])

    def test_hooks_on_every_submodule_see_the_servers_values(self):
        torch.manual_seed(1)
        block = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), block, torch.nn.AdaptiveAvgPool2d(1),
                                  torch.nn.Flatten(), torch.nn.Linear(4, 2)).eval()
        with torch.no_grad():  # statistics that are not the identity
            block[1].running_mean.uniform_(-0.5, 0.5)
            block[1].running_var.uniform_(0.5, 2.0)
        x = torch.randn(2, 3, 9, 9)
        log = []
        for name, m in net.named_modules():  # every module, as users hook them to see where a port breaks
            m.register_forward_pre_hook(
                lambda m, inputs, name=name: log.append(("pre", name, tuple(i.shape for i in inputs), None)))
            m.register_forward_hook(lambda m, inputs, output, name=name: log.append(
                ("post", name, tuple(i.shape for i in inputs), output.detach().clone())))
        with torch.no_grad():
            net(x)
        host, log[:] = list(log), []
        net.npu()
        net(x)
        # Each hook fired once, in torch's order (pre-hooks and hooks interleaved; the root's around the run),
        # with the inputs' shapes and the server's values.
        self.assertEqual([entry[:3] for entry in log], [entry[:3] for entry in host])
        for (_, name, _, got), (_, _, _, want) in zip(log, host):
            if want is not None:
                with self.subTest(module=name or "root"):
                    self.assert_close_to_fp16_cube(got, want)

    def test_training_on_the_npu_is_refused_by_name(self):
        net = small_cnn().npu().train()
        with self.assertRaisesRegex(RuntimeError, r"training Sequential on npu:0 .* gradient graphs"):
            net(torch.randn(2, 3, 8, 8))
        with torch.no_grad():  # evaluation in train mode without autograd is inference
            self.assertEqual(net(torch.randn(2, 3, 8, 8)).shape, (2, 4))

    def test_a_server_that_cannot_be_reached_is_named(self):
        out = run_script("""
            import torch, torch_npu
            print(torch.npu.is_available(), torch.npu.device_count())
            try:
                torch.nn.Linear(2, 2).npu()
            except RuntimeError as e:
                print(e)
        """, "127.0.0.1:1")
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(lines[0], "False 0")
        self.assertIn("no npu-server at 127.0.0.1:1 (NPUSERVE_TARGET)", lines[1])


class TransferToNpu(unittest.TestCase):
    def test_an_unchanged_cuda_snippet_uses_the_npu(self):
        out = run_script("""
            import torch
            import torch_npu
            from torch_npu.contrib import transfer_to_npu
            assert torch.cuda.is_available() and torch.cuda.device_count() == 2
            torch.cuda.set_device("cuda:1")
            assert torch.cuda.current_device() == 1
            d = torch.device("cuda", 1)
            assert (d.type, d.index) == ("npu", 1), d
            torch.manual_seed(0)
            net = torch.nn.Linear(4, 3).eval()
            x = torch.randn(5, 4)
            with torch.no_grad():
                want = net(x)
            net = net.cuda()
            x = x.cuda()
            y = net(x.to("cuda:1"))
            assert (y - want).abs().max().item() < 1e-2, (y, want)
            z = torch.zeros(2, device="cuda")
            print(torch.cuda.synchronize(), "synchronized", torch.cuda.get_device_name(), z.device)
            scaler = torch.cuda.amp.GradScaler()
            print(type(scaler).__module__)
        """, SERVER[1])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.splitlines(), ["None synchronized Ascend910 cpu", "torch_npu.npu.amp"])
        self.assertIn("transfer_to_npu: patched", out.stderr)
        self.assertEqual(out.stderr.count("transfer_to_npu: patched"), 1)


class Distributed(unittest.TestCase):
    def test_hccl_and_nccl_run_on_gloo_between_processes(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        out = run_script(f"""
            import os
            import torch, torch.distributed as dist, torch.multiprocessing as mp
            import torch_npu

            def rank_main(rank, backend):
                dist.init_process_group(backend=backend, init_method="tcp://127.0.0.1:{port}", world_size=2,
                                        rank=rank)
                torch.npu.set_device(rank)
                t = torch.tensor([rank + 1.0])
                dist.all_reduce(t)
                # One write per line: the two ranks share the pipe, and print() may split a line in two.
                line = f"rank {{rank}} {{dist.get_backend()}} {{t.item()}} npu:{{torch.npu.current_device()}}\\n"
                os.write(1, line.encode())
                dist.destroy_process_group()

            if __name__ == "__main__":
                mp.spawn(rank_main, args=("hccl",), nprocs=2)
        """, SERVER[1])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(sorted(out.stdout.splitlines()), ["rank 0 gloo 3.0 npu:0", "rank 1 gloo 3.0 npu:1"])
        self.assertIn("backend 'hccl' is served by torch.distributed's gloo", out.stderr)


class GradScaler(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch_npu  # noqa: F401

    def test_defaults_are_torch_cuda_amps(self):
        ours = inspect.signature(torch.npu.amp.GradScaler).parameters
        theirs = inspect.signature(torch.cuda.amp.GradScaler).parameters
        for name in ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"):
            self.assertEqual(ours[name].default, theirs[name].default, name)

    def test_skips_on_overflow_backs_off_and_grows(self):
        p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
        opt = torch.optim.SGD([p], lr=0.5)
        scaler = torch.npu.amp.GradScaler(init_scale=8.0, growth_interval=2)
        # A clean step: the gradient is unscaled before the update.
        scaler.scale((p * torch.tensor([3.0, 4.0])).sum()).backward()
        scaler.step(opt)
        scaler.update()
        self.assertTrue(torch.equal(p.detach(), torch.tensor([1.0 - 1.5, 2.0 - 2.0])))
        self.assertEqual(scaler.get_scale(), 8.0)
        # An overflowing step is skipped and halves the scale.
        opt.zero_grad()
        before = p.detach().clone()
        scaler.scale((p * torch.tensor([float("inf"), 1.0])).sum()).backward()
        scaler.step(opt)
        scaler.update()
        self.assertTrue(torch.equal(p.detach(), before))
        self.assertEqual(scaler.get_scale(), 4.0)
        # growth_interval clean steps in a row double it.
        for _ in range(2):
            opt.zero_grad()
            scaler.scale(p.sum()).backward()
            scaler.step(opt)
            scaler.update()
        self.assertEqual(scaler.get_scale(), 8.0)
        state = scaler.state_dict()
        other = torch.npu.amp.GradScaler()
        other.load_state_dict(state)
        self.assertEqual(other.state_dict(), state)
        with self.assertRaisesRegex(RuntimeError, "no inf checks"):
            other.update()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
