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
import contextlib
import inspect
import io
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest
import warnings

import numpy as np
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


def train_cnn():
    torch.manual_seed(2)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3, padding=1), torch.nn.BatchNorm2d(6), torch.nn.ReLU(),
                               torch.nn.MaxPool2d(2), torch.nn.Conv2d(6, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(8 * 2 * 2, 5))


def copy_of(module):
    import copy
    return copy.deepcopy(module)


class Training(unittest.TestCase):
    """A module on the NPU under torch's autograd: its backward runs on the
    server (RegisterGradient's graphs), torch.optim updates its parameters.

    Tolerance: the server rounds every Cube operand to fp16 (forward and
    backward GEMMs) and sums in fp32; torch computes in fp32. Per element that
    is about 2^-11 of the sum of |products|, so values are compared as in
    Modules: within 4e-3 of the tensor's largest magnitude."""

    @classmethod
    def setUpClass(cls):
        import torch_npu  # noqa: F401

    def assert_close(self, got, want, what, rel=4e-3):
        # A floor for gradients that are zero but for rounding (a conv's bias before BatchNorm).
        scale = max(want.abs().max().item(), 1e-3)
        err = (got.double() - want.double()).abs().max().item()
        self.assertLessEqual(err, rel * scale, f"{what}: max error {err:.3g} against a scale of {scale:.3g}")

    def check_gradients(self, host, x, weights, near_zero=None):
        """Output, input gradient and every parameter's gradient of (module(x) * weights).sum() on the NPU against
        torch's; near_zero maps a parameter whose gradient is zero but for rounding to the one whose scale bounds
        it. Returns the NPU module."""
        npu = copy_of(host).npu()
        x_host, x_npu = x.clone().requires_grad_(), x.clone().requires_grad_()
        y_host, y_npu = host(x_host), npu(x_npu)
        self.assertIsNotNone(y_npu.grad_fn)
        self.assert_close(y_npu.detach(), y_host.detach(), "output")
        (y_host * weights).sum().backward()
        (y_npu * weights).sum().backward()
        self.assert_close(x_npu.grad, x_host.grad, "input gradient")
        params = dict(host.named_parameters())
        for (name, p_host), (_, p_npu) in zip(host.named_parameters(), npu.named_parameters()):
            if near_zero and name in near_zero:
                err = (p_npu.grad - p_host.grad).abs().max().item()
                self.assertLessEqual(err, 4e-3 * params[near_zero[name]].grad.abs().max().item(), name)
                continue
            self.assertIsNotNone(p_npu.grad, name)
            self.assert_close(p_npu.grad, p_host.grad, f"gradient of {name}")
        return npu

    def test_forward_and_backward_match_torch(self):
        self.check_forward_and_backward(train=True)

    def test_eval_mode_backward_through_frozen_batchnorm_matches_torch(self):
        self.check_forward_and_backward(train=False)

    def check_forward_and_backward(self, train):
        host = train_cnn().train(train)
        with torch.no_grad():  # running statistics that are not the identity
            host[1].running_mean.uniform_(-0.5, 0.5)
            host[1].running_var.uniform_(0.5, 2.0)
        npu = self.check_gradients(host, torch.randn(4, 3, 8, 8), torch.randn(4, 5))
        # BatchNorm's running statistics moved as torch moves them (unbiased variance, momentum 0.1), in train mode.
        bn_host, bn_npu = host[1], npu[1]
        self.assert_close(bn_npu.running_mean, bn_host.running_mean, "running_mean", rel=1e-3)
        self.assert_close(bn_npu.running_var, bn_host.running_var, "running_var", rel=1e-3)
        self.assertEqual(bn_npu.num_batches_tracked.item(), 1 if train else 0)

    def test_a_transformer_encoder_layer_differentiates_as_torch_does(self):
        # Its export computes shapes (Shape, Gather, Concat into Reshape and Slice operands): folded on the server
        # from the signature's static shapes, as inference folds them.
        torch.manual_seed(6)
        host = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)
        npu = copy_of(host).npu()
        x = torch.randn(2, 5, 16)
        weights = torch.randn(2, 5, 16)
        (host(x) * weights).sum().backward()
        y = npu(x)
        (y * weights).sum().backward()
        for (name, p_host), (_, p_npu) in zip(host.named_parameters(), npu.named_parameters()):
            self.assert_close(p_npu.grad, p_host.grad, f"gradient of {name}")

    def test_a_unet_block_with_transposed_conv_group_norm_and_upsampling_differentiates_as_torch_does(self):
        # ConvTranspose, GroupNorm (exported by torch 1.13 as InstanceNormalization between Reshapes),
        # InstanceNorm and a bilinear upsample (Resize, linear) under autograd, with the input's gradient.
        torch.manual_seed(7)

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
                self.norm = torch.nn.GroupNorm(2, 8)
                self.up = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
                self.inorm = torch.nn.InstanceNorm2d(4, affine=True)
                self.head = torch.nn.Conv2d(4, 2, 1)

            def forward(self, x):
                y = torch.relu(self.norm(self.down(x)))
                y = self.inorm(self.up(y))
                y = torch.nn.functional.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
                return self.head(y)

        host = Block()
        with torch.no_grad():  # affine parameters that are not the identity
            for m in (host.norm, host.inorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
        # up.bias's gradient is zero but for rounding (InstanceNorm follows): on the scale of its layer's.
        self.check_gradients(host, torch.randn(2, 3, 8, 8), torch.randn(2, 2, 16, 16),
                             near_zero={"up.bias": "up.weight"})

    def test_a_conv1d_model_with_1d_pools_differentiates_as_torch_does(self):
        # nn.Conv1d, MaxPool1d, AvgPool1d (run as 2-D of height 1) and ConvTranspose1d, with the input's gradient.
        torch.manual_seed(8)
        host = torch.nn.Sequential(
            torch.nn.Conv1d(3, 8, 5, stride=2, padding=2, dilation=1), torch.nn.ReLU(),
            torch.nn.MaxPool1d(3, stride=2, padding=1), torch.nn.Conv1d(8, 8, 3, padding=2, dilation=2, groups=2),
            torch.nn.AvgPool1d(2), torch.nn.ConvTranspose1d(8, 4, 4, stride=2, padding=1), torch.nn.Flatten(),
            torch.nn.Linear(4 * 8, 3))
        x = torch.randn(2, 3, 32)
        npu = self.check_gradients(host, x, torch.randn(2, 3))
        with torch.no_grad():  # and in inference, fused
            self.assert_close(npu.eval()(x), host.eval()(x), "inference output")

    def test_a_conv3d_model_with_3d_pools_and_batchnorm_differentiates_as_torch_does(self):
        # nn.Conv3d (img2col over (channel, kz, ky, kx) on the Cube), BatchNorm3d in train mode, MaxPool3d,
        # ConvTranspose3d, AvgPool3d and AdaptiveAvgPool3d(1) (GlobalAveragePool), with the input's gradient.
        torch.manual_seed(10)
        host = torch.nn.Sequential(
            torch.nn.Conv3d(2, 6, 3, padding=1), torch.nn.BatchNorm3d(6), torch.nn.ReLU(),
            torch.nn.MaxPool3d(2), torch.nn.Conv3d(6, 8, (2, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1),
                                                    dilation=(2, 1, 1)),
            torch.nn.ConvTranspose3d(8, 4, (2, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), output_padding=(0, 1, 1)),
            torch.nn.AvgPool3d((1, 2, 2), ceil_mode=True), torch.nn.AdaptiveAvgPool3d(1), torch.nn.Flatten(),
            torch.nn.Linear(4, 3))
        x = torch.randn(2, 2, 8, 10, 10)
        npu = self.check_gradients(host, x, torch.randn(2, 3))
        with torch.no_grad():  # and in inference, BatchNorm folded into the Conv
            self.assert_close(npu.eval()(x), host.eval()(x), "inference output")

    def test_stacked_bidirectional_lstm_and_gru_differentiate_as_torch_does(self):
        # nn.LSTM (2 layers, bidirectional, batch_first: Transposes around one LSTM node per layer) into nn.GRU
        # (linear_before_reset = 1), its sequence output and its final state both reaching the loss.
        torch.manual_seed(9)

        class Recurrent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = torch.nn.LSTM(5, 8, num_layers=2, bidirectional=True, batch_first=True)
                self.gru = torch.nn.GRU(16, 6)
                self.head = torch.nn.Linear(6, 3)

            def forward(self, x):
                y, _ = self.lstm(x)
                z, h = self.gru(y.transpose(0, 1))
                return self.head(z) + self.head(h)

        self.check_gradients(Recurrent(), torch.randn(3, 7, 5), torch.randn(7, 3, 3))

    def test_the_trainer_trains_models_exported_with_dynamic_batch_and_sequence_axes(self):
        # npu train's path (CreateTrainer/Step): each step's data shape (its batch and sequence length) binds the
        # export's dynamic axes, as inference binds them, and the shape computations fold (a transformer's
        # reshapes, the LSTM's and GRU's zero initial states). A new shape is a new plan, kept for the next step
        # of that shape: a longer sequence, the epoch's last, smaller batch. Each step's loss is torch's, step
        # after step of the same SGD.
        import npuserve

        class Transformer(torch.nn.Module):
            # A causal mask of -inf: at O0 its infinities set the float status every step, which skips nothing.
            def __init__(self):
                super().__init__()
                self.enc = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.0)
                self.fc = torch.nn.Linear(16, 3)

            def forward(self, x):
                n = x.shape[1]
                mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
                return self.fc(self.enc(x, src_mask=mask).mean(1))

        class Recurrent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = torch.nn.LSTM(16, 12, batch_first=True, bidirectional=True)
                self.gru = torch.nn.GRU(24, 10, batch_first=True)
                self.fc = torch.nn.Linear(10, 3)

            def forward(self, x):
                y, _ = self.gru(self.lstm(x)[0])
                return self.fc(y[:, -1])

        for model_class in (Transformer, Recurrent):
            with self.subTest(model_class.__name__):
                torch.manual_seed(7)
                model = model_class()
                onnx_bytes = io.BytesIO()
                with warnings.catch_warnings():  # the tracer's notes on the RNNs' shape checks
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, (torch.randn(4, 5, 16),), onnx_bytes, input_names=["x"],
                                      output_names=["y"], dynamic_axes={"x": {0: "batch", 1: "seq"},
                                                                        "y": {0: "batch"}},
                                      opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
                                      do_constant_folding=False)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                with npuserve.connect(SERVER[1]) as client:
                    trainer = client.trainer(onnx_bytes.getvalue(), loss="cross_entropy", optimizer="sgd", lr=0.1)
                    for rows, seq in ((8, 5), (8, 7), (8, 5), (3, 7)):
                        x, labels = torch.randn(rows, seq, 16), torch.randint(0, 3, (rows,))
                        got = trainer.step(x.numpy(), labels.numpy()).loss
                        opt.zero_grad()
                        want = torch.nn.functional.cross_entropy(model(x), labels)
                        want.backward()
                        opt.step()
                        self.assertAlmostEqual(got, want.item(), delta=4e-3 * want.item(), msg=(rows, seq))
                    with self.assertRaisesRegex(npuserve.NpuError, r'"x" must be FLOAT32 \[B, any, 16\]'):
                        trainer.step(np.zeros((2, 5, 15), np.float32), np.zeros(2, np.int64))

    def test_a_train_mode_export_with_dropout_makes_a_trainer(self):
        # torch exports Dropout (nn.Dropout and attention's) with training_mode true from a module in train mode:
        # CreateTrainer validates the model as inference, and the step graph draws its own seeded masks.
        import npuserve
        torch.manual_seed(11)
        model = torch.nn.Sequential(torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, dropout=0.1),
                                    torch.nn.Flatten(), torch.nn.Linear(16 * 5, 3)).train()
        onnx_bytes = io.BytesIO()
        torch.onnx.export(model, (torch.randn(4, 5, 16),), onnx_bytes, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        x, labels = torch.randn(8, 5, 16), torch.randint(0, 3, (8,))
        with npuserve.connect(SERVER[1]) as client:
            with client.trainer(onnx_bytes.getvalue(), loss="cross_entropy", optimizer="sgd", lr=0.1) as trainer:
                losses = [trainer.step(x.numpy(), labels.numpy()).loss for _ in range(6)]
                evaluated = trainer.evaluate(x.numpy(), labels.numpy()).loss  # inference: no dropout
        self.assertLess(losses[-1], losses[0])
        self.assertLess(evaluated, losses[0])

    def test_training_follows_torch_and_uploads_only_what_changed(self):
        host = train_cnn().train()
        npu = copy_of(host).npu()
        opt_host = torch.optim.SGD(host.parameters(), lr=0.05, momentum=0.9)
        opt_npu = torch.optim.SGD(npu.parameters(), lr=0.05, momentum=0.9)
        torch.manual_seed(3)
        batches = [(torch.randn(8, 3, 8, 8), torch.randint(0, 5, (8,))) for _ in range(4)]
        params = len(list(npu.parameters()))
        handles = npu.forward.trained
        for step, (x, labels) in enumerate(batches):
            for net, opt in ((host, opt_host), (npu, opt_npu)):
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(net(x), labels)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
                opt.step()
                if net is host:
                    want = loss.item()
            self.assertAlmostEqual(loss.item(), want, delta=2e-3 * abs(want), msg=f"step {step}")
            if handles is None:
                handles = npu.forward.trained
            self.assertEqual(handles.handles.uploads, params * (step + 1), "every step uploads each parameter once")
        with torch.no_grad():  # a run in train mode without autograd: the last step's parameters, uploaded once
            for _ in range(2):
                npu(batches[0][0])
        self.assertEqual(handles.handles.uploads, params * (len(batches) + 1))
        for (name, p_host), (_, p_npu) in zip(host.named_parameters(), npu.named_parameters()):
            self.assert_close(p_npu.detach(), p_host.detach(), f"parameter {name} after {len(batches)} steps", rel=1e-2)
        # The optimizer's state and the module's state dict round-trip as on the host.
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "ckpt.pt")
            torch.save({"model": npu.state_dict(), "optimizer": opt_npu.state_dict()}, path)
            ckpt = torch.load(path)
        restored = train_cnn().npu()
        restored.load_state_dict(ckpt["model"])
        opt_restored = torch.optim.SGD(restored.parameters(), lr=0.05, momentum=0.9)
        opt_restored.load_state_dict(ckpt["optimizer"])
        for a, b in zip(opt_restored.state_dict()["state"].values(), opt_npu.state_dict()["state"].values()):
            self.assertTrue(torch.equal(a["momentum_buffer"], b["momentum_buffer"]))
        restored.eval()
        npu.eval()
        with torch.no_grad():
            self.assertTrue(torch.equal(restored(batches[1][0]), npu(batches[1][0])))

    def test_dropout_masks_and_their_gradient(self):
        net = torch.nn.Sequential(torch.nn.Dropout(0.5)).npu().train()
        x = (torch.rand(64, 32) + 0.5).requires_grad_()
        torch.manual_seed(5)
        y = net(x)
        kept = y != 0
        self.assertTrue(0.35 < kept.float().mean().item() < 0.65)
        self.assertTrue(torch.equal(y[kept], x.detach()[kept] * 2))  # inverted dropout: kept values scaled by 2
        y.sum().backward()
        self.assertTrue(torch.equal(x.grad, kept.float() * 2))
        torch.manual_seed(5)
        self.assertTrue(torch.equal(net(x.detach()), y.detach()), "the mask's seed comes from torch's generator")

    def test_a_retained_graph_backpropagates_again_as_torch_does(self):
        # Two losses on one output (retain_graph=True, then a plain backward): each parameter's gradient is the
        # sum of both, as torch's; the second backward recomputes the forward, so nothing saved is missing.
        host = train_cnn()
        net = copy_of(host).npu()
        x = torch.randn(2, 3, 8, 8)
        for model in (host, net):
            y = model(x)
            y.pow(2).sum().backward(retain_graph=True)
            (y * 3).sum().backward()
        for (name, p_host), (_, p_npu) in zip(host.named_parameters(), net.named_parameters()):
            self.assert_close(p_npu.grad, p_host.grad, f"gradient of {name}")
        # Batch statistics were updated once (the recompute does not count a second forward).
        for (name, b_host), (_, b_npu) in zip(host.named_buffers(), net.named_buffers()):
            self.assert_close(b_npu, b_host, name)
        # Dropout: the recompute draws the first run's mask, so the second backward doubles the first's gradient.
        drop = torch.nn.Sequential(torch.nn.Dropout(0.5)).npu().train()
        xd = (torch.rand(64, 32) + 0.5).requires_grad_()
        out = drop(xd).sum()
        out.backward(retain_graph=True)
        first = xd.grad.clone()
        out.backward()
        self.assertTrue(torch.equal(xd.grad, 2 * first))
        # torch's own checks hold: without retain_graph a second backward is torch's error.
        y = net(x).sum()
        y.backward()
        with self.assertRaisesRegex(RuntimeError, "backward through the graph a second time"):
            y.backward()

    def test_a_forward_without_backward_frees_its_activations(self):
        import gc
        import npuserve
        net = train_cnn().npu()
        with npuserve.connect(SERVER[1]) as client:
            def new_handles():
                return {h.id for h in client.handles()} - before
            before = {h.id for h in client.handles()}
            y = net(torch.randn(2, 3, 8, 8))
            params = len(list(net.parameters()))
            self.assertGreater(len(new_handles()), params)  # the parameters and the saved activations
            del y
            gc.collect()
            self.assertEqual(len(new_handles()), params)
            net.cpu()
            self.assertEqual(new_handles(), set())


class Apex(unittest.TestCase):
    """apex.amp (npuserve-shims) on modules on the NPU: O2's fp16 model with
    fp32 masters, the static scale of the ModelZoo samples, and the dynamic
    scale's overflow skip, which on the 910's saturation mode only the
    device's float status can see (fp16 overflows saturate to 65504)."""

    @classmethod
    def setUpClass(cls):
        import torch_npu  # noqa: F401
        from apex import amp
        cls.amp = amp

    def run_steps(self, net, opt, batches, scale=True):
        losses = []
        for x, labels in batches:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x), labels)
            if scale:
                with self.amp.scale_loss(loss, opt) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    def test_o2_with_a_static_scale_trains_as_fp32_does(self):
        host = train_cnn().train()
        net = copy_of(host).npu()
        torch.manual_seed(4)
        batches = [(torch.randn(8, 3, 8, 8), torch.randint(0, 5, (8,))) for _ in range(4)]
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            net, opt = self.amp.initialize(net, opt, opt_level="O2", loss_scale=128.0)
        self.assertIn("Selected optimization level O2:  FP16 training with FP32 batchnorm and FP32 master weights",
                      out.getvalue())
        self.assertIn("loss_scale            : 128.0", out.getvalue())
        self.assertEqual(net[0].weight.dtype, torch.float16)
        self.assertEqual(net[1].weight.dtype, torch.float32)  # keep_batchnorm_fp32
        masters = list(self.amp.master_params(opt))
        self.assertTrue(all(p.dtype == torch.float32 for p in masters))
        self.assertEqual(self.amp.state_dict(), {"loss_scaler0": {"loss_scale": 128.0, "unskipped": 0}})
        got = self.run_steps(net, opt, batches)
        want = self.run_steps(host, torch.optim.SGD(host.parameters(), lr=0.05, momentum=0.9), batches, scale=False)
        # fp16 weights and activations: each step's loss within 1% of fp32's.
        for step, (g, w) in enumerate(zip(got, want)):
            self.assertAlmostEqual(g, w, delta=1e-2 * abs(w), msg=f"step {step}")
        # The masters moved, and the model holds their fp16 copy.
        for (name, p), master in zip(net.named_parameters(), masters):
            self.assertTrue(torch.equal(p.detach(), master.detach().to(p.dtype)), name)
        self.assertEqual(self.amp.state_dict()["loss_scaler0"]["loss_scale"], 128.0)

    def test_an_overflow_the_device_saw_skips_the_step_and_halves_the_scale(self):
        net = train_cnn().npu()
        opt = torch.optim.SGD(net.parameters(), lr=0.05)
        with contextlib.redirect_stdout(io.StringIO()):
            net, opt = self.amp.initialize(net, opt, opt_level="O2")  # dynamic: 2^16 at first
        x = torch.randn(8, 3, 8, 8)
        labels = torch.randint(0, 5, (8,))
        before = [p.detach().clone() for p in self.amp.master_params(opt)]
        opt.zero_grad()
        # Times 100: the gradients at the scale of 2^16 are far past fp16's 65504.
        loss = torch.nn.functional.cross_entropy(net(x), labels) * 100
        with self.amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        # Saturated, not inf: the host sees finite gradients; the device's float status saw the overflow.
        self.assertTrue(all(torch.isfinite(p.grad).all() for p in net.parameters()))
        self.assertGreater(torch_npu_float_status(), 0)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            opt.step()
        self.assertEqual(out.getvalue().strip(),
                         "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0")
        for p, b in zip(self.amp.master_params(opt), before):
            self.assertTrue(torch.equal(p.detach(), b))
        self.assertEqual(self.amp.state_dict()["loss_scaler0"], {"loss_scale": 32768.0, "unskipped": 0})
        state = self.amp.state_dict()
        self.amp.load_state_dict({"loss_scaler0": {"loss_scale": 4.0, "unskipped": 7}})
        self.assertEqual(self.amp.state_dict()["loss_scaler0"], {"loss_scale": 4.0, "unskipped": 7})
        self.amp.load_state_dict(state)
        # With a small scale the same batch steps.
        self.amp.load_state_dict({"loss_scaler0": {"loss_scale": 1.0, "unskipped": 0}})
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), labels) * 100
        with self.amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        self.assertEqual(torch_npu_float_status(), 0)
        opt.step()
        self.assertFalse(all(torch.equal(p.detach(), b) for p, b in zip(self.amp.master_params(opt), before)))


def torch_npu_float_status():
    from npuserve import autograd
    return autograd.float_status()


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


    def test_ddp_trains_a_module_on_the_npu_across_two_processes(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        out = run_script(f"""
            import os
            import torch, torch.distributed as dist, torch.multiprocessing as mp
            import torch_npu
            from torch.nn.parallel import DistributedDataParallel as DDP

            def make():
                torch.manual_seed(0)
                return torch.nn.Sequential(torch.nn.Conv2d(3, 6, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                           torch.nn.Linear(6 * 6 * 6, 4))

            def batches():
                g = torch.Generator().manual_seed(1)
                return [(torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 4, (8,), generator=g))
                        for _ in range(3)]

            def rank_main(rank):
                dist.init_process_group(backend="nccl", init_method="tcp://127.0.0.1:{port}", world_size=2,
                                        rank=rank)
                torch.npu.set_device(rank)
                model = DDP(make().npu(), device_ids=[rank])
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, labels in batches():
                    opt.zero_grad()
                    shard = slice(4 * rank, 4 * rank + 4)
                    torch.nn.functional.cross_entropy(model(x[shard]), labels[shard]).backward()
                    opt.step()
                # The reference: one process, the whole batch, on the host.
                ref = make()
                ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
                for x, labels in batches():
                    ref_opt.zero_grad()
                    torch.nn.functional.cross_entropy(ref(x), labels).backward()
                    ref_opt.step()
                err = max(((p - q).abs().max() / q.abs().max()).item()
                          for p, q in zip(model.module.parameters(), ref.parameters()))
                mine = torch.cat([p.detach().flatten() for p in model.module.parameters()])
                other = mine.clone()
                dist.broadcast(other, src=0)
                line = f"rank {{rank}} npu:{{torch.npu.current_device()}} same={{torch.equal(mine, other)}} " \\
                       f"close={{err < 1e-2}} {{err:.2e}}\\n"
                os.write(1, line.encode())
                dist.destroy_process_group()

            if __name__ == "__main__":
                mp.spawn(rank_main, nprocs=2)
        """, SERVER[1], timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = sorted(line.rsplit(" ", 1)[0] for line in out.stdout.splitlines())
        self.assertEqual(lines, ["rank 0 npu:0 same=True close=True", "rank 1 npu:1 same=True close=True"],
                         out.stdout)


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
