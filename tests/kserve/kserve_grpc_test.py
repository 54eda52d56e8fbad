"""KServe v2 gRPC (inference.GRPCInferenceService) against a real npu-server,
with stubs generated from the protocol's .proto at test time: every RPC, every
served datatype in raw and typed form, parameters, the model-repository
calls, tenancy, and the error status of each bad request."""
import json
import os
import sys
import time
import unittest

import grpc
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import kserve_harness as h  # noqa: E402

h.generate_stubs()
from kserve import grpc_service_pb2 as kp  # noqa: E402
from kserve import grpc_service_pb2_grpc as kg  # noqa: E402
from npu.v1 import device_pb2, device_pb2_grpc, graph_pb2, runtime_pb2, runtime_pb2_grpc, tensor_pb2  # noqa: E402

RNG = np.random.default_rng(16)


def raw_request(model, arrays, **fields):
    """A ModelInferRequest with every input in raw_input_contents."""
    req = kp.ModelInferRequest(model_name=model, **fields)
    for name, a in arrays.items():
        req.inputs.add(name=name, datatype=h.KSERVE_DTYPE[a.dtype.type], shape=a.shape)
        req.raw_input_contents.append(a.tobytes())
    return req


def typed_request(model, arrays, **fields):
    """A ModelInferRequest with every input in its typed contents field."""
    req = kp.ModelInferRequest(model_name=model, **fields)
    for name, a in arrays.items():
        i = req.inputs.add(name=name, datatype=h.KSERVE_DTYPE[a.dtype.type], shape=a.shape)
        field = {np.float32: "fp32_contents", np.int32: "int_contents", np.int8: "int_contents",
                 np.int64: "int64_contents", np.bool_: "bool_contents"}[a.dtype.type]
        getattr(i.contents, field).extend(a.flatten().tolist())
    return req


NUMPY = {"FP16": np.float16, "FP32": np.float32, "INT32": np.int32, "INT8": np.int8, "BOOL": np.bool_,
         "INT64": np.int64}


def raw_outputs(resp):
    return {o.name: np.frombuffer(resp.raw_output_contents[k], NUMPY[o.datatype]).reshape(o.shape)
            for k, o in enumerate(resp.outputs)}


def typed_outputs(resp):
    out = {}
    for o in resp.outputs:
        c = o.contents
        values = {"FP32": c.fp32_contents, "INT32": c.int_contents, "INT8": c.int_contents,
                  "INT64": c.int64_contents, "BOOL": c.bool_contents}[o.datatype]
        out[o.name] = np.array(values, NUMPY[o.datatype]).reshape(o.shape)
    return out


class KserveGrpcTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = h.Server("--devices=2")
        cls.channel = grpc.insecure_channel(cls.server.grpc_target)
        cls.k = kg.GRPCInferenceServiceStub(cls.channel)
        cls.runtime = runtime_pb2_grpc.RuntimeServiceStub(cls.channel)

        def reg(text):
            return h.register(cls.runtime, runtime_pb2, graph_pb2, text)

        cls.mlp_id = reg(h.mlp_json())
        cls.typed_id = reg(h.transpose_graph("transposes", h.TRANSPOSE_TYPES))
        cls.fp16_id = reg(h.transpose_graph("transpose16", [np.float16, np.int32]))
        cls.add_id = reg(h.graph_json("add", [("x", np.float32, (2, 4)), ("y", np.float32, (2, 4))],
                                      [h.node("add", "Add", ["x", "y"], ["z"]),
                                       h.node("neg", "Neg", ["z"], ["n"])], ["z", "n"]))
        # Dynamic batch dim: planned for each request's shapes.
        cls.dynamic_id = reg(h.graph_json("dynamic_add", [("x", np.float32, (-1, 4)), ("y", np.float32, (-1, 4))],
                                          [h.node("add", "Add", ["x", "y"], ["z"])], ["z"]))
        # Long enough to be stopped by a deadline: 24 chained 512^3 fp16 MatMuls.
        nodes = [h.node(f"mm{i}", "MatMul", [f"v{i}", "w"], [f"v{i + 1}"]) for i in range(24)]
        w = np.full((512, 512), 1 / 512, np.float16)
        reg(h.graph_json("slow", [("v0", np.float16, (512, 512))], nodes, ["v24"],
                         [{"name": "w", "tensor": {"dtype": "FLOAT16", "shape": [512, 512],
                                                   "data": __import__("base64").b64encode(w.tobytes()).decode()}}]))
        cls.devices = device_pb2_grpc.DeviceServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.stop()

    def assertFails(self, call, request, code, *fragments):
        with self.assertRaises(grpc.RpcError) as e:
            call(request)
        self.assertEqual(e.exception.code(), code, e.exception.details())
        for f in fragments:
            self.assertIn(f, e.exception.details())
        self.assertTrue(self.k.ServerLive(kp.ServerLiveRequest()).live)  # still serving

    def test_server_live_ready_and_metadata(self):
        self.assertTrue(self.k.ServerLive(kp.ServerLiveRequest()).live)
        self.assertTrue(self.k.ServerReady(kp.ServerReadyRequest()).ready)
        m = self.k.ServerMetadata(kp.ServerMetadataRequest())
        self.assertEqual(m.name, "npuserve")
        self.assertRegex(m.version, r"^\d+\.\d+\.\d+$")
        self.assertEqual(set(m.extensions), {"model_repository", "binary_tensor_data", "parameters"})

    def test_model_metadata_by_name_and_by_id(self):
        by_name = self.k.ModelMetadata(kp.ModelMetadataRequest(name="mlp"))
        self.assertEqual(by_name.name, "mlp")
        self.assertEqual(list(by_name.versions), ["1"])
        self.assertEqual(by_name.platform, "npuserve_graph")
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in by_name.inputs], [("x", "FP16", [4, 64])])
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in by_name.outputs], [("y", "FP16", [4, 10])])
        by_id = self.k.ModelMetadata(kp.ModelMetadataRequest(name=self.mlp_id, version="1"))
        self.assertEqual(by_id.name, self.mlp_id)
        self.assertEqual(by_id.inputs, by_name.inputs)
        typed = self.k.ModelMetadata(kp.ModelMetadataRequest(name="transposes"))
        self.assertEqual([t.datatype for t in typed.inputs], ["FP32", "INT32", "INT8", "INT64", "BOOL"])
        self.assertEqual([list(t.shape) for t in typed.outputs], [[3, 2]] * 5)
        self.assertFails(self.k.ModelMetadata, kp.ModelMetadataRequest(name="nope"), grpc.StatusCode.NOT_FOUND,
                         'model "nope" not found')
        self.assertFails(self.k.ModelMetadata, kp.ModelMetadataRequest(name="mlp", version="2"),
                         grpc.StatusCode.NOT_FOUND, 'model "mlp" has no version "2"')

    def test_a_model_with_dynamic_dims_is_planned_for_each_requests_shapes(self):
        meta = self.k.ModelMetadata(kp.ModelMetadataRequest(name="dynamic_add"))
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in meta.inputs],
                         [("x", "FP32", [-1, 4]), ("y", "FP32", [-1, 4])])
        self.assertEqual([(t.name, t.datatype) for t in meta.outputs], [("z", "")])  # typed once bound
        for batch in (1, 3, 7, 3):
            x, y = h.sample(np.float32, (batch, 4), RNG), h.sample(np.float32, (batch, 4), RNG)
            out = raw_outputs(self.k.ModelInfer(raw_request("dynamic_add", {"x": x, "y": y})))
            np.testing.assert_array_equal(out["z"], x + y)  # one IEEE add: exact
        x = h.sample(np.float32, (2, 4), RNG)
        infer, INVALID = self.k.ModelInfer, grpc.StatusCode.INVALID_ARGUMENT
        self.assertFails(infer, raw_request("dynamic_add", {"x": x}), INVALID,
                         'input "y" of model "dynamic_add" is missing; it takes FP32[-1,4]')
        self.assertFails(infer, raw_request("dynamic_add", {"x": x, "y": x, "q": x}), INVALID, 'has no input "q"')
        self.assertFails(infer, raw_request("dynamic_add", {"x": x, "y": x.reshape(4, 2)}), INVALID, '"y"')
        self.assertFails(infer, raw_request("dynamic_add", {"x": x, "y": h.sample(np.float32, (3, 4), RNG)}),
                         INVALID, '"add"')

    def test_model_ready(self):
        self.assertTrue(self.k.ModelReady(kp.ModelReadyRequest(name="mlp")).ready)
        self.assertTrue(self.k.ModelReady(kp.ModelReadyRequest(name=self.mlp_id, version="1")).ready)
        self.assertFalse(self.k.ModelReady(kp.ModelReadyRequest(name="nope")).ready)
        self.assertFalse(self.k.ModelReady(kp.ModelReadyRequest(name="mlp", version="7")).ready)

    def test_fp16_infer_equals_npu_v1_run_bit_for_bit_and_matches_float64(self):
        x = np.load(os.path.join(h.SOURCE, "examples", "graphs", "mlp_x.npy"))
        resp = self.k.ModelInfer(raw_request("mlp", {"x": x}, id="req-42"))
        self.assertEqual((resp.model_name, resp.model_version, resp.id), ("mlp", "1", "req-42"))
        self.assertEqual([(o.name, o.datatype, list(o.shape)) for o in resp.outputs], [("y", "FP16", [4, 10])])
        self.assertEqual(len(resp.outputs[0].contents.fp32_contents), 0)  # raw in, raw out
        y = raw_outputs(resp)["y"]

        run = runtime_pb2.RunRequest(graph_id=self.mlp_id)
        run.inputs.add(name="x", tensor=tensor_pb2.Tensor(dtype=tensor_pb2.FLOAT16, shape=x.shape, data=x.tobytes()))
        v1_out = self.runtime.Run(run).outputs[0].tensor.data
        self.assertEqual(y.tobytes(), v1_out)

        # fp16 between nodes: within two half ulps (2^-9 each at |y| in [2, 4)) of the float64 value.
        np.testing.assert_allclose(y.astype(np.float64), h.mlp_reference(x), rtol=0, atol=4e-3)

    def test_every_datatype_round_trips_raw_and_typed(self):
        arrays = {f"in_{h.KSERVE_DTYPE[t].lower()}": h.sample(t, (2, 3), RNG) for t in h.TRANSPOSE_TYPES}
        want = {"out" + n[2:]: a.T for n, a in arrays.items()}
        for make, read in ((raw_request, raw_outputs), (typed_request, typed_outputs)):
            resp = self.k.ModelInfer(make("transposes", arrays))
            self.assertEqual(len(resp.raw_output_contents), len(want) if make is raw_request else 0)
            got = read(resp)
            self.assertEqual(set(got), set(want))
            for name in want:
                self.assertEqual(got[name].dtype, want[name].dtype, name)
                np.testing.assert_array_equal(got[name], want[name], name)

    def test_fp16_output_makes_a_typed_request_answer_raw(self):
        # FP16 has no typed field: its input goes raw; the INT32 one may not be typed then.
        x16 = h.sample(np.float16, (2, 3), RNG)
        i32 = h.sample(np.int32, (2, 3), RNG)
        resp = self.k.ModelInfer(raw_request("transpose16", {"in_fp16": x16, "in_int32": i32}))
        got = raw_outputs(resp)
        np.testing.assert_array_equal(got["out_fp16"], x16.T)
        np.testing.assert_array_equal(got["out_int32"], i32.T)

    def test_float32_add_is_exact_and_outputs_follow_the_request(self):
        x = h.sample(np.float32, (2, 4), RNG)
        y = h.sample(np.float32, (2, 4), RNG)
        req = typed_request("add", {"x": x, "y": y})
        req.outputs.add(name="n")
        req.outputs.add(name="z")
        resp = self.k.ModelInfer(req)
        self.assertEqual([o.name for o in resp.outputs], ["n", "z"])
        got = typed_outputs(resp)
        np.testing.assert_array_equal(got["z"], x + y)
        np.testing.assert_array_equal(got["n"], -(x + y))
        only = typed_request("add", {"x": x, "y": y})
        only.outputs.add(name="z")
        self.assertEqual([o.name for o in self.k.ModelInfer(only).outputs], ["z"])

    def test_response_parameters_carry_the_profile(self):
        x = h.sample(np.float32, (2, 4), RNG)
        resp = self.k.ModelInfer(typed_request("add", {"x": x, "y": x}))
        p = resp.parameters
        self.assertEqual(p["npu_device"].string_param[:4], "npu:")
        self.assertEqual(p["npu_preset"].string_param, "ascend910")
        self.assertGreater(p["npu_total_cycles"].int64_param, 0)
        self.assertGreater(p["npu_device_time_ns"].int64_param, 0)
        self.assertGreaterEqual(p["npu_queue_cycles"].int64_param, 0)
        self.assertTrue(p["npu_cost_model"].string_param)
        self.assertNotIn("npu_profile", p)

        req = typed_request("add", {"x": x, "y": x})
        req.parameters["npu_profile"].bool_param = True
        req.parameters["npu_device"].string_param = "npu:1"
        resp = self.k.ModelInfer(req)
        self.assertEqual(resp.parameters["npu_device"].string_param, "npu:1")
        profile = json.loads(resp.parameters["npu_profile"].string_param)
        self.assertEqual([(n["name"], n["op_type"]) for n in profile["nodes"]], [("add", "Add"), ("neg", "Neg")])
        self.assertEqual(int(profile["total_cycles"]), resp.parameters["npu_total_cycles"].int64_param)
        self.assertTrue(all("tiles" not in n for n in profile["nodes"]))

    def test_every_bad_request_names_what_is_wrong(self):
        INVALID, NOT_FOUND = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND
        x = h.sample(np.float32, (2, 4), RNG)
        infer = self.k.ModelInfer
        self.assertFails(infer, raw_request("nope", {"x": x}), NOT_FOUND, 'model "nope" not found')
        self.assertFails(infer, raw_request("", {"x": x}), INVALID, "names no model")
        self.assertFails(infer, raw_request("add", {"x": x}, model_version="3"), NOT_FOUND, 'no version "3"')
        self.assertFails(infer, raw_request("add", {"x": x}), INVALID, 'input "y" of model "add" is missing',
                         "FP32[2,4]")
        self.assertFails(infer, raw_request("add", {"x": x, "y": x, "q": x}), INVALID, 'has no input "q"')
        self.assertFails(infer, raw_request("add", {"x": x, "y": x.astype(np.int32)}), INVALID,
                         'input "y" is INT32[2,4]; model "add" takes FP32[2,4]')
        self.assertFails(infer, raw_request("add", {"x": x, "y": x.reshape(4, 2)}), INVALID,
                         'input "y" is FP32[4,2]')

        req = raw_request("add", {"x": x, "y": x})
        req.inputs[1].datatype = "UINT8"
        self.assertFails(infer, req, INVALID, 'input "y": datatype UINT8 is not supported')
        req.inputs[1].datatype = "float32"
        self.assertFails(infer, req, INVALID, 'unknown datatype "float32"')
        req = raw_request("add", {"x": x, "y": x})
        del req.raw_input_contents[1]
        self.assertFails(infer, req, INVALID, "raw_input_contents has 1 entries for 2 inputs")
        req = raw_request("add", {"x": x, "y": x})
        req.raw_input_contents[1] = req.raw_input_contents[1][:-4]
        self.assertFails(infer, req, INVALID, 'input "y"', "32 bytes; raw_input_contents[1] has 28")
        req = raw_request("add", {"x": x, "y": x})
        req.inputs[0].contents.fp32_contents.append(1.0)
        self.assertFails(infer, req, INVALID, "sets contents while the request carries raw_input_contents")
        req = raw_request("add", {"x": x, "y": x})
        req.inputs[0].shape[0] = -2
        self.assertFails(infer, req, INVALID, 'input "x": dimension 0 is negative')

        req = typed_request("add", {"x": x, "y": x})
        req.inputs[1].contents.ClearField("fp32_contents")
        req.inputs[1].contents.int_contents.extend([1] * 8)
        self.assertFails(infer, req, INVALID, "FP32 data goes in contents.fp32_contents",
                         "sets contents.int_contents")
        req = typed_request("add", {"x": x, "y": x})
        del req.inputs[1].contents.fp32_contents[3:]
        self.assertFails(infer, req, INVALID, "has 8 elements; contents.fp32_contents has 3")
        req = kp.ModelInferRequest(model_name="transposes")
        req.inputs.add(name="in_int8", datatype="INT8", shape=[1]).contents.int_contents.append(300)
        self.assertFails(infer, req, INVALID, "INT8 element 0 is 300, outside -128..127")
        req = kp.ModelInferRequest(model_name="transpose16")
        req.inputs.add(name="in_fp16", datatype="FP16", shape=[1]).contents.fp32_contents.append(1.0)
        self.assertFails(infer, req, INVALID, "FP16 has no typed contents field")
        bools = {f"in_{h.KSERVE_DTYPE[t].lower()}": h.sample(t, (2, 3), RNG) for t in h.TRANSPOSE_TYPES}
        req = raw_request("transposes", bools)
        req.raw_input_contents[4] = b"\x00\x01\x02\x00\x00\x00"
        self.assertFails(infer, req, INVALID, 'input "in_bool": BOOL element 2', "BOOL bytes are 0 or 1")
        req = raw_request("add", {"x": x, "y": x})
        req.inputs.add().CopyFrom(req.inputs[0])
        req.raw_input_contents.append(req.raw_input_contents[0])
        self.assertFails(infer, req, INVALID, 'input "x" is given twice')

        req = raw_request("add", {"x": x, "y": x})
        req.outputs.add(name="w")
        self.assertFails(infer, req, INVALID, 'model "add" has no output "w" (outputs: z, n)')
        req = raw_request("add", {"x": x, "y": x})
        req.outputs.add(name="z").parameters["classification"].int64_param = 3
        self.assertFails(infer, req, grpc.StatusCode.UNIMPLEMENTED, "classification extension is not served")
        req = raw_request("add", {"x": x, "y": x})
        req.parameters["npu_profile"].string_param = "yes"
        self.assertFails(infer, req, INVALID, 'parameter "npu_profile" must be a bool')
        req = raw_request("add", {"x": x, "y": x})
        req.parameters["npu_profil"].bool_param = True
        self.assertFails(infer, req, INVALID, 'unknown request parameter "npu_profil"')
        req = raw_request("add", {"x": x, "y": x})
        req.parameters["npu_device"].string_param = "npu:9"
        self.assertFails(infer, req, NOT_FOUND, "npu:9")
        # Client-chosen names are quoted with a bound: the status fits gRPC's metadata.
        with self.assertRaises(grpc.RpcError) as e:
            self.k.ModelMetadata(kp.ModelMetadataRequest(name="m" * 20000))
        self.assertEqual(e.exception.code(), NOT_FOUND)
        self.assertIn("(20000 bytes) not found", e.exception.details())
        self.assertLess(len(e.exception.details()), 4096)
        req = raw_request("add", {"x": x, "y": x})
        req.parameters["sequence_id"].int64_param = 5  # someone else's parameter: ignored
        self.assertEqual(len(infer(req).outputs), 2)

    def test_a_passed_deadline_stops_the_run_on_the_device(self):
        before = self.devices.GetStats(device_pb2.GetStatsRequest())
        req = raw_request("slow", {"v0": np.ones((512, 512), np.float16)})
        with self.assertRaises(grpc.RpcError) as e:
            self.k.ModelInfer(req, timeout=0.02)
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        # The server saw the deadline pass and stopped the run: counted cancelled, nothing left in flight.
        for _ in range(500):
            stats = self.devices.GetStats(device_pb2.GetStatsRequest())
            if stats.runs_in_flight == 0 and stats.runs_cancelled > before.runs_cancelled:
                break
            time.sleep(0.01)
        self.assertEqual(stats.runs_cancelled, before.runs_cancelled + 1)
        self.assertEqual(stats.runs_in_flight, 0)
        x = h.sample(np.float32, (2, 4), RNG)
        np.testing.assert_array_equal(raw_outputs(self.k.ModelInfer(raw_request("add", {"x": x, "y": x})))["z"], x + x)

    def test_a_request_that_is_not_protobuf_is_named(self):
        call = self.channel.unary_unary("/inference.GRPCInferenceService/ModelInfer",
                                        request_serializer=lambda b: b, response_deserializer=lambda b: b)
        with self.assertRaises(grpc.RpcError) as e:
            call(b"\x0a\xff\xff\xff\xff\x0f")
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, e.exception.details())
        self.assertIn("the request to /inference.GRPCInferenceService/ModelInfer is not a valid protobuf message",
                      e.exception.details())
        self.assertTrue(self.k.ServerLive(kp.ServerLiveRequest()).live)

    def test_huge_declared_shapes_are_refused_before_any_allocation(self):
        INVALID = grpc.StatusCode.INVALID_ARGUMENT
        x = h.sample(np.float32, (2, 4), RNG)
        infer = self.k.ModelInfer
        # 2^40 FP32 elements (4 TiB) declared, 32 bytes sent: refused by size, raw and typed.
        req = raw_request("add", {"x": x, "y": x})
        req.inputs[0].ClearField("shape")
        req.inputs[0].shape.extend([1 << 20, 1 << 20])
        self.assertFails(infer, req, INVALID, 'input "x": FP32[1048576,1048576] is 4398046511104 bytes',
                         "raw_input_contents[0] has 32")
        req = typed_request("add", {"x": x, "y": x})
        req.inputs[1].ClearField("shape")
        req.inputs[1].shape.extend([1 << 20, 1 << 20])
        self.assertFails(infer, req, INVALID, "has 1099511627776 elements; contents.fp32_contents has 8")
        # Past the element limit, a product that overflows int64, a rank past 8.
        for shape, fragment in (([1 << 21, 1 << 20], "[2097152,1048576] has more than 1099511627776 elements"),
                                ([1 << 62, 1 << 62, 4], "has more than 1099511627776 elements"),
                                ([1] * 9, "rank 9 exceeds the maximum of 8")):
            req = raw_request("add", {"x": x, "y": x})
            req.inputs[0].ClearField("shape")
            req.inputs[0].shape.extend(shape)
            self.assertFails(infer, req, INVALID, fragment)
        # And the server still answers a good request with the right numbers.
        resp = infer(raw_request("add", {"x": x, "y": x}))
        np.testing.assert_array_equal(raw_outputs(resp)["z"], x + x)

    def test_repository_index_load_and_unload(self):
        gid = h.register(self.runtime, runtime_pb2, graph_pb2,
                         h.graph_json("scratch", [("a", np.int32, (3,))], [h.node("i", "Identity", ["a"], ["b"])],
                                      ["b"]))
        index = self.k.RepositoryIndex(kp.RepositoryIndexRequest())
        entries = {(m.name, m.version, m.state) for m in index.models}
        self.assertIn((gid, "1", "READY"), entries)
        self.assertIn((self.mlp_id, "1", "READY"), entries)
        self.assertEqual(index, self.k.RepositoryIndex(kp.RepositoryIndexRequest(ready=True)))

        self.k.RepositoryModelLoad(kp.RepositoryModelLoadRequest(model_name="scratch"))
        load = kp.RepositoryModelLoadRequest(model_name="scratch")
        load.parameters["config"].string_param = "{}"
        self.assertFails(self.k.RepositoryModelLoad, load, grpc.StatusCode.UNIMPLEMENTED, 'load parameter "config"')
        self.assertFails(self.k.RepositoryModelLoad, kp.RepositoryModelLoadRequest(model_name="nope"),
                         grpc.StatusCode.NOT_FOUND, 'model "nope" not found')

        self.k.RepositoryModelUnload(kp.RepositoryModelUnloadRequest(model_name="scratch"))
        self.assertFalse(self.k.ModelReady(kp.ModelReadyRequest(name="scratch")).ready)
        self.assertNotIn(gid, {m.name for m in self.k.RepositoryIndex(kp.RepositoryIndexRequest()).models})
        with self.assertRaises(grpc.RpcError) as e:  # unregistered for npu.v1 too
            self.runtime.Run(runtime_pb2.RunRequest(graph_id=gid))
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertFails(self.k.RepositoryModelUnload, kp.RepositoryModelUnloadRequest(model_name="scratch"),
                         grpc.StatusCode.NOT_FOUND, 'model "scratch" not found')

    def test_a_name_shared_by_two_graphs_asks_for_an_id(self):
        # Two different graphs of one name (the same content twice would be one
        # registration: RegisterGraph dedups by content hash).
        first = h.register(self.runtime, runtime_pb2, graph_pb2, h.graph_json(
            "twin", [("a", np.int32, (2,))], [h.node("i", "Identity", ["a"], ["b"])], ["b"]))
        second = h.register(self.runtime, runtime_pb2, graph_pb2, h.graph_json(
            "twin", [("a", np.int32, (3,))], [h.node("i", "Identity", ["a"], ["b"])], ["b"]))
        self.assertNotEqual(first, second)
        self.assertFails(self.k.ModelMetadata, kp.ModelMetadataRequest(name="twin"),
                         grpc.StatusCode.INVALID_ARGUMENT, "is the name of 2 registered graphs", first, second)
        self.assertEqual(self.k.ModelMetadata(kp.ModelMetadataRequest(name=second)).name, second)
        for gid in (first, second):
            self.k.RepositoryModelUnload(kp.RepositoryModelUnloadRequest(model_name=gid))


class KserveGrpcTenancyTest(unittest.TestCase):
    def test_tenants_see_only_their_own_models(self):
        with h.server_with_tokens("tok-a alice\ntok-b bob\n") as server:
            channel = grpc.insecure_channel(server.grpc_target)
            k = kg.GRPCInferenceServiceStub(channel)
            runtime = runtime_pb2_grpc.RuntimeServiceStub(channel)
            alice, bob = [("authorization", "Bearer tok-a")], [("authorization", "Bearer tok-b")]
            gid = h.register(runtime, runtime_pb2, graph_pb2,
                             h.graph_json("secret", [("a", np.int32, (2,))],
                                          [h.node("i", "Identity", ["a"], ["b"])], ["b"]), token="tok-a")

            self.assertTrue(k.ServerLive(kp.ServerLiveRequest()).live)  # probes need no token
            self.assertTrue(k.ServerReady(kp.ServerReadyRequest()).ready)
            for call, req in ((k.ServerMetadata, kp.ServerMetadataRequest()),
                              (k.ModelMetadata, kp.ModelMetadataRequest(name="secret")),
                              (k.RepositoryIndex, kp.RepositoryIndexRequest())):
                with self.assertRaises(grpc.RpcError) as e:
                    call(req)
                self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
            with self.assertRaises(grpc.RpcError) as e:
                k.ModelInfer(raw_request("secret", {"a": np.array([1, 2], np.int32)}),
                             metadata=[("authorization", "Bearer wrong")])
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)

            a = np.array([7, -7], np.int32)
            out = k.ModelInfer(raw_request("secret", {"a": a}), metadata=alice)
            np.testing.assert_array_equal(raw_outputs(out)["b"], a)
            self.assertIn(gid, {m.name for m in k.RepositoryIndex(kp.RepositoryIndexRequest(), metadata=alice).models})

            self.assertEqual(list(k.RepositoryIndex(kp.RepositoryIndexRequest(), metadata=bob).models), [])
            self.assertFalse(k.ModelReady(kp.ModelReadyRequest(name=gid), metadata=bob).ready)
            for name in ("secret", gid):
                for call, req in ((k.ModelMetadata, kp.ModelMetadataRequest(name=name)),
                                  (k.ModelInfer, raw_request(name, {"a": a})),
                                  (k.RepositoryModelUnload, kp.RepositoryModelUnloadRequest(model_name=name))):
                    with self.assertRaises(grpc.RpcError) as e:
                        call(req, metadata=bob)
                    self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
                    # Exactly what a name that never existed gets.
                    self.assertEqual(e.exception.details(),
                                     f'model "{name}" not found: no graph registered by this caller has that id '
                                     "or name")
            self.assertTrue(k.ModelReady(kp.ModelReadyRequest(name="secret"), metadata=alice).ready)
            channel.close()

if __name__ == "__main__":
    unittest.main()
