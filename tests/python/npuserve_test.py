"""The Python package npuserve against real npu-server processes over loopback.

Usage (ctest does this): PYTHONPATH=build/python /usr/bin/python3 npuserve_test.py \
    --server build/server/rpc/npu-server --npu build/client/npu --source .
References are independent of the package: NumPy arithmetic on exactly
representable values, bit patterns compared as bytes, and `npu run`'s own CSV.
"""
import argparse
import copy
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import grpc
import numpy as np

import npuserve

ARGS = None


class Server:
    """npu-server on a free loopback port; stopped with SIGTERM."""

    def __init__(self, *flags):
        self.process = subprocess.Popen([ARGS.server, "--listen=127.0.0.1:0", "--threads=2", *flags],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not match:
            self.process.kill()
            raise RuntimeError(f"npu-server did not start: {line}{self.process.stderr.read()}")
        self.target = f"127.0.0.1:{match.group(1)}"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.communicate(timeout=30)


def matmul_add_graph(m=3, k=4, n=5):
    """y = x @ w + b, fp16 x [m, k], with small integer weights: every value and
    partial sum is exact in fp16 and fp32, so the result is exactly NumPy's."""
    w = (np.arange(k * n).reshape(k, n) % 7 - 3).astype(np.float16)
    b = (np.arange(n) - 2).astype(np.float16)
    graph = {
        "name": "matmul_add",
        "inputs": [{"name": "x", "dtype": "FLOAT16", "shape": [m, k]}],
        "initializers": [
            {"name": "w", "tensor": _tensor_json(w)},
            {"name": "b", "tensor": _tensor_json(b)},
        ],
        "nodes": [
            {"name": "mm", "opType": "MatMul", "inputs": ["x", "w"], "outputs": ["xw"]},
            {"name": "bias", "opType": "Add", "inputs": ["xw", "b"], "outputs": ["y"]},
        ],
        "outputs": ["y"],
    }
    return graph, w, b


def _tensor_json(a):
    import base64
    return {"dtype": "FLOAT16", "shape": list(a.shape), "data": base64.b64encode(a.astype("<f2").tobytes()).decode()}


def small_ints(shape, dtype=np.float16):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2).astype(dtype)


class DtypeMapping(unittest.TestCase):
    def test_numpy_dtypes_map_to_the_protos_names(self):
        expected = {np.float16: "FLOAT16", np.float32: "FLOAT32", np.int32: "INT32", np.int8: "INT8",
                    np.bool_: "BOOL", np.int64: "INT64"}
        for numpy_dtype, name in expected.items():
            with self.subTest(name):
                t = npuserve.to_tensor(np.zeros((2, 3), numpy_dtype))
                self.assertEqual(npuserve.tensor_pb2.DataType.Name(t.dtype), name)
                self.assertEqual(len(t.data), 6 * np.dtype(numpy_dtype).itemsize)
                self.assertEqual(npuserve.from_tensor(t).dtype, np.dtype(numpy_dtype))


class PlainServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.npu = npuserve.connect(cls.server.target, timeout=30)

    @classmethod
    def tearDownClass(cls):
        cls.npu.close()
        cls.server.stop()

    def test_health_devices_and_stats(self):
        self.assertEqual(self.npu.health(), "SERVING")
        devices = self.npu.devices()
        self.assertEqual([d.id for d in devices], ["npu:0"])
        self.assertEqual(devices[0].preset, "ascend910")
        before = self.npu.stats().runs_total
        graph, _, _ = matmul_add_graph()
        self.npu.run(graph, {"x": small_ints((3, 4))})
        self.assertEqual(self.npu.stats().runs_total, before + 1)

    def test_gradient_graphs_give_exact_gradients_and_refuse_bad_requests_by_name(self):
        graph, w, _ = matmul_add_graph()
        g = self.npu.register_gradient(graph, parameters=["w", "b"], wrt=["w", "x", "b"])
        try:
            x = small_ints((3, 4))
            forward = self.npu.run(g.forward, {"x": x, "w": w, "b": np.zeros(5, np.float16)}, keep=g.saved)
            dy = small_ints((3, 5))
            inputs = {g.grad_outputs[0]: dy}
            for v in g.backward.inputs:
                if v.name in ("x", "w"):
                    inputs[v.name] = {"x": x, "w": w}[v.name]
                elif v.name in g.saved:
                    inputs[v.name] = forward[v.name]
            backward = self.npu.run(g.backward, inputs, release=g.saved)
            # Small integers: every fp16 operand and fp32 sum exact, as NumPy's float64.
            want = {"w": x.astype(np.float64).T @ dy, "x": dy.astype(np.float64) @ w.astype(np.float64).T,
                    "b": dy.astype(np.float64).sum(0)}
            for name, out in zip(["w", "x", "b"], g.gradients):
                np.testing.assert_array_equal(backward[out].astype(np.float64), want[name], err_msg=name)
            self.assertEqual(backward[g.float_status], 0.0)
            self.assertEqual([h for h in self.npu.handles() if h.id in {forward[s].id for s in g.saved}], [])
        finally:
            g.unregister()
        for kwargs, message in (({"parameters": ["nope"], "wrt": ["w"]}, 'parameter "nope" is not a float initializer'),
                                ({"parameters": ["w"], "wrt": ["xw"]}, 'gradient of "xw" asked for: it is neither'),
                                ({"parameters": ["w", "w"], "wrt": ["w"]}, 'parameter "w" is named twice')):
            with self.assertRaises(npuserve.NpuError) as e:
                self.npu.register_gradient(graph, **kwargs)
            self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
            self.assertIn(message, e.exception.details)
        with self.assertRaises(npuserve.NpuError) as e:
            self.npu.register_gradient(b"\x08\x07 not an onnx model", wrt=["x"])
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        request = npuserve.runtime_pb2.RegisterGradientRequest(wrt=["x"], opt_level=9)
        request.graph.CopyFrom(npuserve.graphs.graph_message(graph))
        with self.assertRaises(npuserve.NpuError) as e:
            self.npu._call(self.npu._runtime.RegisterGradient, request)
        self.assertIn("amp.opt_level 9 is unknown", e.exception.details)
        self.assertEqual(self.npu.health(), "SERVING")

    def test_every_dtype_round_trips_bit_for_bit(self):
        f16 = np.array([0.0, -0.0, 1.0, 65504.0, -65504.0, np.inf, -np.inf, np.nan, 6e-8, 2 ** -24], np.float16)
        cases = {
            "float16": f16.reshape(2, 5),
            "float32": np.array([[0.0, -0.0, 1.5e-45, 3.4028235e38], [np.inf, np.nan, -1.0, 1e-10]], np.float32),
            "int32": np.array([-2 ** 31, -1, 0, 2 ** 31 - 1], np.int32),
            "int8": np.array([-128, -1, 0, 127], np.int8).reshape(2, 2, 1),
            "bool": np.array([[True, False, True]]),
            "int64": np.array([-2 ** 63, -1, 0, 2 ** 63 - 1], np.int64),
            "scalar": np.array(3.25, np.float32),
            "empty": np.zeros((0, 3), np.float16),
        }
        for name, array in cases.items():
            with self.subTest(name):
                handle = self.npu.upload(array)
                self.assertEqual(handle.shape, array.shape)
                self.assertEqual(handle.dtype, array.dtype.name)
                self.assertEqual(handle.bytes, array.nbytes)
                back = self.npu.download(handle)
                self.npu.free(handle)
                self.assertEqual(back.dtype, array.dtype)
                self.assertEqual(back.shape, array.shape)
                self.assertEqual(back.tobytes(), array.tobytes())
                back[...] = 0 if back.size else back  # writable

    def test_layouts_are_sent_row_major_little_endian(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        for name, view in {"transposed": a.T, "strided": a[:, ::2], "big-endian": a.astype(">f4")}.items():
            with self.subTest(name):
                h = self.npu.upload(view)
                back = self.npu.download(h)
                self.npu.free(h)
                np.testing.assert_array_equal(back, np.asarray(view, dtype=np.float32))
                self.assertEqual(back.dtype, np.dtype("<f4"))

    def test_a_tensor_larger_than_one_chunk(self):
        a = np.random.default_rng(1).standard_normal((3 << 20) // 4 + 5).astype(np.float32)  # 3 MiB + 20 B
        h = self.npu.upload(a)
        self.assertEqual(self.npu.download(h).tobytes(), a.tobytes())
        self.npu.free(h)
        self.assertNotIn(h, self.npu.handles())

    def test_dtypes_without_a_device_type_are_refused_by_name(self):
        for array in (np.zeros(3, np.float64), np.zeros(3, np.uint8), np.zeros(3, np.complex64)):
            with self.subTest(array.dtype.name):
                with self.assertRaisesRegex(ValueError, f"{array.dtype.name} is not a device dtype .*float16"):
                    self.npu.upload(array)

    def test_register_and_run_with_numpy_exactly(self):
        graph, w, b = matmul_add_graph()
        mm = self.npu.register(graph)
        self.assertEqual(mm.inputs, [npuserve.ValueType("x", "float16", (3, 4))])
        self.assertEqual(mm.outputs, [npuserve.ValueType("y", "float16", (3, 5))])
        x = small_ints((3, 4))
        y = mm(x=x)["y"]
        expected = (x.astype(np.float64) @ w.astype(np.float64) + b).astype(np.float16)
        self.assertEqual(y.dtype, np.float16)
        np.testing.assert_array_equal(y, expected)
        # The same graph inline, and a Python list converted to the declared dtype.
        np.testing.assert_array_equal(self.npu.run(graph, {"x": x.tolist()})["y"], expected)
        mm.unregister()
        with self.assertRaises(npuserve.NpuError) as e:
            mm(x=x)
        self.assertEqual(e.exception.code.name, "NOT_FOUND")

    def test_float_mode_per_run(self):
        graph = {"name": "exp", "inputs": [{"name": "h", "dtype": "FLOAT16", "shape": [2]}],
                 "nodes": [{"name": "e", "opType": "Exp", "inputs": ["h"], "outputs": ["y"]}], "outputs": ["y"]}
        h = np.array([12.0, 1.0], np.float16)
        one = np.float16(np.exp(np.float64(1)))
        preset = self.npu.run(graph, {"h": h})  # the ascend910's saturation
        np.testing.assert_array_equal(preset["y"], np.array([65504, one], np.float16))
        ieee = self.npu.run(graph, {"h": h}, float_mode="inf_nan", profile=True)
        np.testing.assert_array_equal(ieee["y"], np.array([np.inf, one], np.float16))
        self.assertEqual(ieee.profile.float_mode, npuserve._stubs.tensor_pb2.FLOAT_MODE_INF_NAN)
        np.testing.assert_array_equal(self.npu.run(graph, {"h": h}, float_mode="saturation")["y"], preset["y"])
        with self.assertRaisesRegex(ValueError, r"float_mode 'ieee' is not one of 'saturation', 'inf_nan'"):
            self.npu.run(graph, {"h": h}, float_mode="ieee")

    def test_compare_names_the_submodule_where_a_port_diverges(self):
        import torch
        import npuserve.precision
        import npuserve.torch

        class Scale(torch.nn.Module):  # an un-normalised input: past fp16's range before the Linear
            def forward(self, x):
                return x * 1e5

        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.ReLU(), Scale(), torch.nn.Linear(8, 4)).eval()
        x = torch.rand(3, 8) + 0.5
        result = npuserve.compare(net, (x,), client=self.npu)
        names = [r["NPU Name"] for r in result.rows]
        self.assertEqual(names, ["Module.0.ReLU.forward.0.output.0", "Module.1.Scale.forward.0.output.0",
                                 "Module.2.Linear.forward.0.output.0", "Module.Sequential.forward.0.output.0"])
        verdicts = [r["Result"] for r in result.rows]
        self.assertEqual(verdicts, ["pass", "pass", "error", "error"])
        self.assertEqual(result.rows[0]["MaxAbsErr"], "0")  # fp32 Vector ops: the bench's bits
        self.assertEqual(result.first_divergence["NPU Name"], "Module.2.Linear.forward.0.output.0")
        # The Linear's MaxAbsErr against float64: the NPU's operands were 65504 where torch's were x * 1e5.
        with torch.no_grad():
            want = net.double()(x.double()).numpy()
            net.float()
        with npuserve.torch.compile(net, x, client=self.npu) as on_npu:
            got = on_npu(x).numpy()
        self.assertAlmostEqual(float(result.rows[2]["MaxAbsErr"]), float(np.max(np.abs(got - want))),
                               delta=1e-3 * float(np.max(np.abs(want))))
        with tempfile.TemporaryDirectory() as d:
            result.to_csv(os.path.join(d, "compare_result.csv"))
            with open(os.path.join(d, "compare_result.csv")) as f:
                self.assertEqual(f.readline().strip(), ",".join(npuserve.precision.COLUMNS))

    def test_run_with_torch_tensors(self):
        import torch
        graph, w, b = matmul_add_graph()
        with self.npu.register(graph) as mm:
            x = torch.from_numpy(small_ints((3, 4)))
            y = mm(x=x)["y"]
            np.testing.assert_array_equal(y, (x.numpy().astype(np.float64) @ w + b).astype(np.float16))
            with self.assertRaisesRegex(ValueError, "bfloat16 is not a device dtype"):
                mm(x=x.to(torch.bfloat16))

    def test_handles_in_and_outputs_kept_on_the_device(self):
        graph, w, b = matmul_add_graph()
        with self.npu.register(graph) as mm:
            x = small_ints((3, 4))
            hx = self.npu.upload(x)
            result = mm(x=hx, keep=["y"])
            hy = result["y"]
            self.assertIsInstance(hy, npuserve.Handle)
            self.assertEqual((hy.dtype, hy.shape), ("float16", (3, 5)))
            np.testing.assert_array_equal(self.npu.download(hy), (x.astype(np.float64) @ w + b).astype(np.float16))
            for h in (hx, hy):
                self.npu.free(h)

    def test_a_wrong_input_says_what_to_convert(self):
        graph, _, _ = matmul_add_graph()
        with self.npu.register(graph) as mm:
            with self.assertRaisesRegex(ValueError, r'input "x": expects float16, got float64 .*astype\(np.float16\)'):
                mm(x=np.zeros((3, 4)))

    def test_server_errors_name_the_node(self):
        graph, _, _ = matmul_add_graph()
        graph["initializers"][0]["tensor"]["shape"] = [5, 4]  # x [3, 4] @ w [5, 4]
        graph["initializers"][0]["tensor"]["data"] = _tensor_json(np.zeros((5, 4), np.float16))["data"]
        with self.assertRaises(npuserve.NpuError) as e:
            self.npu.register(graph)
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn('node "mm" (MatMul)', e.exception.details)
        self.assertTrue(str(e.exception).startswith("INVALID_ARGUMENT: "))

    def test_profile_rows_are_the_op_summary_npu_run_writes(self):
        mlp = os.path.join(ARGS.source, "examples", "graphs", "mlp.json")
        x = np.load(os.path.join(ARGS.source, "examples", "graphs", "mlp_x.npy"))
        result = self.npu.run(mlp, {"x": x}, profile=True)
        rows = result.op_summary()
        # Each MatMul runs with the ops after it fused into its FixPipe epilogue:
        # one row each, named after all of its nodes (as msprof names fused ops).
        self.assertEqual([r["Op Name"] for r in rows], ["fc1+bias1+relu1", "fc2+bias2"])
        # The test server's chip (ascend910) is coupled: msprof's Atlas training layout, every task AI_CORE.
        self.assertEqual(result.profile.core_architecture, "coupled")
        self.assertEqual(list(rows[0]), npuserve.COUPLED_OP_SUMMARY_COLUMNS)
        self.assertEqual([r["Task Type"] for r in rows], ["AI_CORE"] * 2)
        self.assertIsNotNone(rows[0]["mac_ratio"])
        self.assertEqual(rows[1]["Input Shapes"], "4,128;128,10;10")
        fc1 = result.profile.nodes[0]
        self.assertEqual(rows[0]["Task Duration(us)"],
                         (fc1.complete_cycle - fc1.dispatch_cycle) / result.profile.clock_mhz)
        # The modeled cycles are the same for every run of this graph on an idle
        # device, so `npu run --op-summary` must write the same CSV.
        out = tempfile.mkdtemp()
        try:
            np.save(os.path.join(out, "x.npy"), x)
            csv_path = os.path.join(out, "op_summary.csv")
            subprocess.run([ARGS.npu, "--target", self.server.target, "run", mlp, "--input",
                            f"x={os.path.join(out, 'x.npy')}", "--output-dir", out, "--op-summary", csv_path],
                           check=True, capture_output=True)
            with open(csv_path, encoding="utf-8") as f:
                self.assertEqual(npuserve.op_summary_csv(result.profile), f.read())
        finally:
            shutil.rmtree(out)

    def test_an_onnx_model_as_path_bytes_or_model_proto_is_one_registration(self):
        import onnx
        model, w, b = matmul_add_onnx()
        d = tempfile.mkdtemp()
        try:
            path = os.path.join(d, "matmul_add.onnx")
            onnx.save(model, path)
            with open(path, "rb") as f:
                data = f.read()
            first = self.npu.register(path)
            self.assertEqual(first.inputs, [npuserve.ValueType("x", "float32", (3, 4))])
            self.assertEqual(first.outputs, [npuserve.ValueType("y", "float32", (3, 5))])
            self.assertEqual(first.sha256, hashlib.sha256(data).hexdigest())
            for again in (data, bytearray(data), onnx.load_from_string(data)):
                with self.subTest(type(again).__name__):
                    self.assertEqual(self.npu.register(again).id, first.id)
            x = small_ints((3, 4), np.float32)
            np.testing.assert_array_equal(first(x)["y"], (x.astype(np.float64) @ w + b).astype(np.float32))
            # run() takes the model itself too: registered once, found by hash.
            np.testing.assert_array_equal(self.npu.run(path, {"x": x})["y"], first(x=x)["y"])
            # Each registration of the bytes is counted (run() of the model is one too):
            # the graph goes with the last unregister, never from under another's runs.
            first.unregister()
            np.testing.assert_array_equal(first(x)["y"], (x.astype(np.float64) @ w + b).astype(np.float32))
            for _ in range(4):  # the three registrations above and run()'s
                self.npu.unregister(first.id)
            with self.assertRaises(npuserve.NpuError) as e:
                first(x)
            self.assertEqual(e.exception.code.name, "NOT_FOUND")
        finally:
            shutil.rmtree(d)

    def test_a_torch_module_is_exported_and_matches_torch(self):
        import torch
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                  torch.nn.Linear(8 * 6 * 6, 10)).train()
        x = torch.randn(2, 3, 6, 6)
        reg = self.npu.register(net, example_inputs=(x,))
        self.assertTrue(net.training)  # exported in eval mode, given back as it was
        self.assertEqual([v.name for v in reg.inputs], ["x0"])
        self.assertEqual(reg.outputs, [npuserve.ValueType("y0", "float32", (2, 10))])
        with torch.no_grad():
            expected = copy.deepcopy(net).double().eval()(x.double()).numpy()
        got = reg(x)["y0"]
        # Cube operands are fp16 (relative rounding 2^-11 each), products summed in
        # fp32: |error| <= 2 * 2^-11 * sum|a||b| per output, taken here in float64.
        # Plus the fp32 roundings of the bias adds and the output.
        np.testing.assert_array_less(np.abs(got - expected), cube_bound(net, x) + 2 ** -22 * np.abs(expected))

    def test_dynamic_axes_bind_each_runs_batch(self):
        import torch
        net = torch.nn.Linear(4, 5)
        with torch.no_grad():  # small integers: every product and sum is exact in fp16 and fp32
            net.weight.copy_(torch.from_numpy(small_ints((5, 4), np.float32)))
            net.bias.copy_(torch.arange(5.0) - 2)
        reg = self.npu.register(net, example_inputs=torch.zeros(2, 4), input_names=["x"], output_names=["y"],
                                dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        self.assertEqual(reg.inputs, [npuserve.ValueType("x", "float32", (-1, 4))])
        for batch in (1, 7):
            with self.subTest(batch=batch):
                x = small_ints((batch, 4), np.float32)
                with torch.no_grad():
                    expected = net(torch.from_numpy(x)).numpy()
                np.testing.assert_array_equal(reg(x=x)["y"], expected)

    def test_torch_compile_returns_what_the_module_returns(self):
        import torch
        import npuserve.torch

        class TwoHeads(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(4, 5)

            def forward(self, x, shift):
                y = self.linear(x)
                return y, {"relu": torch.relu(y - shift)}

        net = TwoHeads()
        with torch.no_grad():  # small integers: every product and sum is exact in fp16 and fp32
            net.linear.weight.copy_(torch.from_numpy(small_ints((5, 4), np.float32)))
            net.linear.bias.copy_(torch.arange(5.0) - 2)
        x, shift = torch.from_numpy(small_ints((2, 4), np.float32)), torch.tensor([1.0, 0, -1, 2, 0])
        compiled = npuserve.torch.compile(net, (x, shift), client=self.npu)
        again = npuserve.torch.compile(net, (x, shift), client=self.npu)
        self.assertEqual(again.graph.id, compiled.graph.id)  # registered once
        y, heads = compiled(x, shift)
        with torch.no_grad():
            want_y, want_heads = net(x, shift)
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(set(heads), {"relu"})
        torch.testing.assert_close(y, want_y, rtol=0, atol=0)
        torch.testing.assert_close(heads["relu"], want_heads["relu"], rtol=0, atol=0)
        with self.assertRaises(npuserve.NpuError) as e:  # exported for a batch of 2
            compiled(torch.zeros(3, 4), shift)
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn('"x0"', e.exception.details)
        with self.assertRaisesRegex(TypeError, "1 inputs given; the module was compiled with 2"):
            compiled(x)
        with self.assertRaisesRegex(TypeError, "takes tensors"):
            compiled(x, [1.0, 0, -1, 2, 0])
        compiled.close()
        torch.testing.assert_close(again(x, shift)[0], want_y, rtol=0, atol=0)  # its own registration holds it
        again.close()
        with self.assertRaises(npuserve.NpuError) as e:
            again(x, shift)
        self.assertEqual(e.exception.code.name, "NOT_FOUND")

    def test_torch_compile_dynamic_takes_any_batch(self):
        import torch
        import npuserve.torch
        net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh())
        with torch.no_grad():
            net[0].weight.copy_(torch.from_numpy(small_ints((3, 4), np.float32)))
            net[0].bias.zero_()
        with npuserve.torch.compile(net, torch.zeros(2, 4), client=self.npu, dynamic=True, profile=True) as compiled:
            self.assertEqual(compiled.graph.inputs, [npuserve.ValueType("x0", "float32", (-1, 4))])
            for batch in (1, 6):
                x = torch.from_numpy(small_ints((batch, 4), np.float32)) / 8
                got = compiled(x)
                self.assertEqual(tuple(got.shape), (batch, 3))
                # Tanh on the Vector unit: within a few fp32 ulps of float64.
                want = torch.tanh(x.double() @ net[0].weight.double().T)
                torch.testing.assert_close(got.double(), want, rtol=4 * 2 ** -23, atol=2 ** -24)
                self.assertTrue(compiled.last_result.op_summary())
        with self.assertRaisesRegex(TypeError, "torch.nn.Module"):
            npuserve.torch.compile(lambda x: x, torch.zeros(1), client=self.npu)

    def test_a_slice_zeroed_in_forward_exports_and_runs(self):
        import torch

        class ZeroSlice(torch.nn.Module):  # as torchvision's swin_v2 clears part of its qkv bias
            def forward(self, x):
                y = x.clone()
                y[:, 1:3].zero_()
                return y * 2

        x = torch.from_numpy(small_ints((2, 5), np.float32))
        reg = self.npu.register(ZeroSlice(), example_inputs=x)
        want = ZeroSlice()(x).numpy()
        self.assertEqual(np.count_nonzero(want[:, 1:3]), 0)
        np.testing.assert_array_equal(reg(x)["y0"], want)

    def test_trainer_one_sgd_step_is_float64s(self):
        import onnx
        import onnx.numpy_helper
        import torch
        net = torch.nn.Linear(4, 2)
        w, b = small_ints((2, 4), np.float32), np.array([1.0, -2.0], np.float32)
        with torch.no_grad():
            net.weight.copy_(torch.from_numpy(w))
            net.bias.copy_(torch.from_numpy(b))
        x, y = small_ints((4, 4), np.float32)[::-1].copy(), small_ints((4, 2), np.float32)
        lr = 2 ** -6
        with self.npu.trainer(net, example_inputs=torch.zeros(4, 4), loss="mse", optimizer="sgd", lr=lr) as t:
            self.assertEqual(sorted(t.parameters), ["bias", "weight"])
            s = t.step(x, y)
            trained = {i.name: onnx.numpy_helper.to_array(i) for i in onnx.load_from_string(t.export()).graph.initializer}
        # MSE over all 8 elements and its gradient, in float64: small integers
        # and powers of two, so every value is exact in fp16 and fp32 too.
        xd, wd, bd, yd = (a.astype(np.float64) for a in (x, w, b, y))
        err = xd @ wd.T + bd - yd
        grad = 2 * err / err.size
        self.assertEqual(s.step, 1)
        self.assertEqual(s.loss, np.mean(err ** 2))
        self.assertFalse(s.skipped)
        np.testing.assert_array_equal(trained["weight"], wd - lr * grad.T @ xd)
        np.testing.assert_array_equal(trained["bias"], bd - lr * grad.sum(0))

    def test_trainer_learns_resumes_bit_for_bit_and_exports(self):
        import torch
        torch.manual_seed(0)
        rng = np.random.default_rng(5)
        x = rng.standard_normal((64, 8)).astype(np.float32)
        labels = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
        net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
        t = self.npu.trainer(net, example_inputs=torch.zeros(2, 8), loss="cross_entropy", optimizer="adam",
                             lr=0.05, amp="O2", loss_scale="dynamic:1024", seed=3, input_names=["x"],
                             output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        try:
            self.assertEqual(t.loss_scale, 1024)
            first = t.step(x, labels, profile=True)
            self.assertEqual(len(first.profiles), 1)
            self.assertTrue(first.profiles[0].nodes)
            for _ in range(30):
                t.step(x, labels)
            result = t.evaluate(x, labels, return_predictions=True)
            self.assertGreaterEqual(result.accuracy, 0.9)
            self.assertEqual(result.count, 64)
            self.assertEqual(result.predictions.shape, (64, 2))
            ckpt = t.save_checkpoint()
            after = [t.step(x, labels).loss for _ in range(3)]
            exported = t.export()
            self.assertEqual(t.restore_checkpoint(ckpt.SerializeToString()), ckpt.step)
            self.assertEqual([t.step(x, labels).loss for _ in range(3)], after)
            self.assertEqual(t.export(), exported)
            logits = self.npu.register(exported)(x)["y"]  # the trained model runs as any ONNX model
            self.assertGreaterEqual(np.mean(logits.argmax(1) == labels), 0.9)
            with self.assertRaisesRegex(ValueError, "x: expects float32, got float64"):
                t.step(x.astype(np.float64), labels)
            with self.assertRaises(npuserve.NpuError) as e:
                t.step(x, labels[:10])
            self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        finally:
            t.close()
        with self.assertRaises(npuserve.NpuError) as e:
            t.step(x, labels)
        self.assertEqual(e.exception.code.name, "NOT_FOUND")
        for bad, message in (({"loss": "hinge"}, "loss 'hinge' is not one of"),
                             ({"optimizer": "lamb"}, "optimizer 'lamb' is not one of"),
                             ({"amp": "O3"}, "amp 'O3' is not one of"),
                             ({"loss_scale": "dynamic:big"}, "dynamic:INIT takes a number")):
            with self.assertRaisesRegex(ValueError, message):
                self.npu.trainer(net, example_inputs=torch.zeros(2, 8), **{"loss": "cross_entropy",
                                                                          "optimizer": "sgd", "lr": 0.1, **bad})

    def test_bad_models_are_refused_by_name(self):
        import onnx
        import torch
        model, _, _ = matmul_add_onnx()
        model.graph.node[1].op_type = "NoSuchOp"
        with self.assertRaises(npuserve.NpuError) as e:
            self.npu.register(model)
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn('"NoSuchOp" is not supported', e.exception.details)
        with self.assertRaises(npuserve.NpuError) as e:
            self.npu.register(b"\xff\xff not onnx")
        self.assertEqual(e.exception.code.name, "INVALID_ARGUMENT")
        with self.assertRaisesRegex(ValueError, "needs example_inputs"):
            self.npu.register(torch.nn.Linear(2, 2))
        with self.assertRaisesRegex(TypeError, "for a torch.nn.Module"):
            self.npu.register(onnx.ModelProto(), example_inputs=(1,))
        with self.assertRaisesRegex(ValueError, "empty"):
            self.npu.register(b"")
        with self.assertRaisesRegex(TypeError, "got int"):
            self.npu.register(3)


class SmallMessages(unittest.TestCase):
    """A client whose messages are at most 256 KiB: models and inputs above it
    must go by the streaming calls (a unary call that large fails in gRPC)."""

    LIMIT = 256 << 10

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.npu = npuserve.connect(cls.server.target, timeout=60, max_send_bytes=cls.LIMIT)

    @classmethod
    def tearDownClass(cls):
        cls.npu.close()
        cls.server.stop()

    def test_a_model_above_the_limit_is_streamed_and_found_again_by_hash(self):
        model, w, b = matmul_add_onnx(m=160, k=256, n=512)  # a 512 KiB weight
        data = model.SerializeToString()
        self.assertGreater(len(data), 2 * self.LIMIT)
        reg = self.npu.register(data)
        self.assertEqual(reg.sha256, hashlib.sha256(data).hexdigest())
        x = small_ints((160, 256), np.float32)  # 160 KiB: fits
        expected = (x.astype(np.float64) @ w + b).astype(np.float32)
        np.testing.assert_array_equal(reg(x)["y"], expected)
        self.assertEqual(self.npu.register(model).id, reg.id)  # FindGraph: no bytes sent
        # A limit above the model: sent unary, still one registration.
        with npuserve.connect(self.server.target, timeout=60) as roomy:
            self.assertEqual(roomy.register(data).id, reg.id)
        reg.unregister()

    def test_inputs_above_the_limit_are_uploaded_and_freed(self):
        model, w, b = matmul_add_onnx(m=512, k=256, n=8)
        reg = self.npu.register(model)
        x = small_ints((512, 256), np.float32)  # 512 KiB: does not fit
        before = self.npu.handles()
        np.testing.assert_array_equal(reg(x)["y"], (x.astype(np.float64) @ w + b).astype(np.float32))
        self.assertEqual(self.npu.handles(), before)
        # A run that fails after the upload frees the handle too.
        with self.assertRaises(npuserve.NpuError):
            reg(x=x, keep=["no_such_output"])
        self.assertEqual(self.npu.handles(), before)
        reg.unregister()

    def test_a_training_batch_above_the_limit_is_uploaded_and_freed(self):
        import torch
        x = small_ints((128, 1024), np.float32)  # 512 KiB
        labels = np.arange(128, dtype=np.int64) % 2
        with self.npu.trainer(torch.nn.Linear(1024, 2), example_inputs=torch.zeros(2, 1024), loss="cross_entropy",
                              optimizer="sgd", lr=0.1) as t:
            before = self.npu.handles()
            self.assertEqual(t.step(x, labels).step, 1)
            self.assertEqual(t.evaluate(x, labels).count, 128)
            self.assertEqual(self.npu.handles(), before)


    def test_a_trainer_and_gradient_graphs_of_a_model_above_the_limit(self):
        # CreateTrainer and RegisterGradient name the model by graph_id when it does not fit one message: it is
        # streamed, used, and unregistered once the call is answered (FindGraph no longer finds it).
        import torch
        torch.manual_seed(3)
        net = torch.nn.Sequential(torch.nn.Linear(256, 384), torch.nn.ReLU(), torch.nn.Linear(384, 2))  # ~400 KiB
        data = npuserve.graphs.model_of(net, torch.zeros(2, 256)).data
        self.assertGreater(len(data), self.LIMIT)
        sha = hashlib.sha256(data).hexdigest()
        x, labels = small_ints((16, 256), np.float32) / 8, np.arange(16, dtype=np.int64) % 2
        with self.npu.trainer(data, loss="cross_entropy", optimizer="sgd", lr=0.05) as t:
            first = t.step(x, labels).loss
            for _ in range(3):
                last = t.step(x, labels).loss
        want = torch.nn.functional.cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(labels)).item()
        self.assertAlmostEqual(first, want, delta=2e-3 * want)
        self.assertLess(last, first)
        graphs = self.npu.register_gradient(data, parameters=["0.weight"], wrt=["0.weight"])
        self.assertEqual(len(graphs.gradients), 1)
        graphs.unregister()
        with self.assertRaises(npuserve.NpuError) as e:
            self.npu._call(self.npu._runtime.FindGraph, npuserve.runtime_pb2.FindGraphRequest(content_sha256=sha))
        self.assertEqual(e.exception.code, grpc.StatusCode.NOT_FOUND)
        # A model this tenant registered itself is used by id and stays registered.
        reg = self.npu.register(data)
        with self.npu.trainer(data, loss="cross_entropy", optimizer="sgd", lr=0.05) as t:
            self.assertAlmostEqual(t.step(x, labels).loss, want, delta=2e-3 * want)
        self.assertEqual(self.npu.register(data).id, reg.id)
        reg.unregister()


def matmul_add_onnx(m=3, k=4, n=5):
    """The ONNX form of matmul_add_graph (fp32, small integers: exact on the Cube)."""
    from onnx import TensorProto, helper, numpy_helper
    w = (np.arange(k * n).reshape(k, n) % 7 - 3).astype(np.float32)
    b = (np.arange(n) % 5 - 2).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
         helper.make_node("Add", ["xw", "b"], ["y"], name="bias")],
        "matmul_add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), w, b


def cube_bound(net, x):
    """The bound of the Conv -> ReLU -> Linear net on the Cube, in float64: a
    K-term dot product of fp16-rounded operands summed in fp32 errs by at most
    (2 * 2^-11 + K * 2^-24) * (|a| @ |b|); the Conv's error goes on through the
    Linear (ReLU does not grow it)."""
    import torch
    conv, linear = net[0], net[3]

    def rel(k):
        return 2 ** -10 + k * 2 ** -24

    with torch.no_grad():
        xd, cw, lw = x.double(), conv.weight.double(), linear.weight.double()
        h = torch.relu(torch.nn.functional.conv2d(xd, cw, conv.bias.double(), padding=1)).flatten(1)
        conv_err = rel(cw[0].numel()) * torch.nn.functional.conv2d(xd.abs(), cw.abs(), padding=1).flatten(1)
        err = conv_err @ lw.abs().T + rel(lw.shape[1]) * (h.abs() + conv_err) @ lw.abs().T
    return err.numpy()


class TokenServer(unittest.TestCase):
    def test_bearer_token(self):
        with tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False) as f:
            f.write("s3cret alice\n")
        server = Server(f"--auth_tokens={f.name}")
        try:
            with npuserve.connect(server.target, token="s3cret") as npu:
                self.assertEqual(len(npu.devices()), 1)
            with npuserve.connect(server.target, token="wrong") as npu:
                with self.assertRaises(npuserve.NpuError) as e:
                    npu.devices()
                self.assertEqual(e.exception.code.name, "UNAUTHENTICATED")
        finally:
            server.stop()
            os.unlink(f.name)


class MutualTlsServer(unittest.TestCase):
    def test_client_certificate_and_mismatch_hints(self):
        d = tempfile.mkdtemp()
        try:
            for name in ("server", "client"):
                subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext",
                                "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", f"{d}/{name}.key", "-out",
                                f"{d}/{name}.pem"], check=True, capture_output=True)
            server = Server(f"--tls-cert={d}/server.pem", f"--tls-key={d}/server.key",
                            f"--tls-client-ca={d}/client.pem")
            try:
                tls = npuserve.TLS(ca=f"{d}/server.pem", cert=f"{d}/client.pem", key=f"{d}/client.key")
                with npuserve.connect(server.target, tls=tls, retry=False) as npu:
                    self.assertEqual(npu.health(), "SERVING")
                with npuserve.connect(server.target, retry=False, timeout=10) as npu:
                    with self.assertRaisesRegex(npuserve.NpuError, "if it serves TLS, pass tls="):
                        npu.devices()
                with npuserve.connect(server.target, tls=f"{d}/server.pem", retry=False, timeout=10) as npu:
                    with self.assertRaisesRegex(npuserve.NpuError, "requires client certificates"):
                        npu.devices()
                with self.assertRaisesRegex(ValueError, "needs its key"):
                    npuserve.TLS(cert=f"{d}/client.pem")
            finally:
                server.stop()
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--npu", required=True)
    parser.add_argument("--source", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
