"""The model repository (--model_repository) through KServe v2, gRPC and
HTTP: versioned and unversioned folders, ONNX and npu.v1 graph files, a model
that does not load, load/unload/reload from disk, a model added after start,
and that every tenant sees the repository."""
import json
import os
import shutil
import sys
import tempfile
import unittest

import grpc
import numpy as np
import onnx
from google.protobuf import json_format
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import kserve_harness as h  # noqa: E402

h.generate_stubs()
from kserve import grpc_service_pb2 as kp  # noqa: E402
from kserve import grpc_service_pb2_grpc as kg  # noqa: E402

from kserve_http_test import Http, decode_infer  # noqa: E402

RNG = np.random.default_rng(7)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def elementwise(name, op):
    """z = x OP y on FP32 [2, 3], as graph.json text."""
    return h.graph_json(name, [("x", np.float32, (2, 3)), ("y", np.float32, (2, 3))],
                        [h.node("n", op, ["x", "y"], ["z"])], ["z"])


def onnx_affine(path):
    """y = x * 2 + b: an ONNX file with initializers, made with onnx.helper."""
    b = np.array([0.5, -1.0, 4.0], np.float32)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])], "affine",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)
    return b


def raw_infer(model, arrays, version=""):
    req = kp.ModelInferRequest(model_name=model, model_version=version)
    for name, a in arrays.items():
        req.inputs.add(name=name, datatype=h.KSERVE_DTYPE[a.dtype.type], shape=a.shape)
        req.raw_input_contents.append(a.tobytes())
    return req


def output(resp, k=0):
    o = resp.outputs[k]
    return np.frombuffer(resp.raw_output_contents[k], np.float32).reshape(o.shape)


class ModelRepositoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kserve_repo_")
        write(os.path.join(cls.dir, "arith", "1", "graph.json"), elementwise("whatever", "Add"))
        write(os.path.join(cls.dir, "arith", "2", "graph.json"), elementwise("whatever", "Sub"))
        # Triton's model configuration: every version served (Triton's default is the latest only).
        write(os.path.join(cls.dir, "arith", "config.pbtxt"), 'name: "arith"\nversion_policy { all { } }\n')
        write(os.path.join(cls.dir, "ordered", "9", "graph.json"), elementwise("nine", "Add"))
        write(os.path.join(cls.dir, "ordered", "10", "graph.json"), elementwise("ten", "Mul"))
        write(os.path.join(cls.dir, "ordered", "010", "graph.json"), "not a version folder: ignored")
        write(os.path.join(cls.dir, "mlp", "graph.json"), h.mlp_json())
        cls.bias = onnx_affine(os.path.join(cls.dir, "affine", "1", "model.onnx"))
        write(os.path.join(cls.dir, "broken", "1", "graph.json"),
              h.graph_json("broken", [("x", np.float32, (2,))], [h.node("n", "Frobnicate", ["x"], ["y"])], ["y"]))
        os.makedirs(os.path.join(cls.dir, "empty"))
        cls.tokens = tempfile.NamedTemporaryFile("w", prefix="npu_tokens_", delete=False)
        cls.tokens.write("tok-a alice\ntok-b bob\n")
        cls.tokens.close()
        cls.server = h.Server(f"--model_repository={cls.dir}", f"--auth_tokens={cls.tokens.name}")
        cls.channel = grpc.insecure_channel(cls.server.grpc_target)
        cls.k = kg.GRPCInferenceServiceStub(cls.channel)
        cls.alice = [("authorization", "Bearer tok-a")]
        cls.bob = [("authorization", "Bearer tok-b")]

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        try:
            cls.server.stop()
        finally:
            os.unlink(cls.tokens.name)
            shutil.rmtree(cls.dir)

    def call(self, method, request, who=None):
        return getattr(self.k, method)(request, metadata=who or self.alice)

    def fails(self, method, request, code, *fragments):
        with self.assertRaises(grpc.RpcError) as e:
            self.call(method, request)
        self.assertEqual(e.exception.code(), code, e.exception.details())
        for f in fragments:
            self.assertIn(f, e.exception.details())

    def test_startup_line_counts_what_loaded(self):
        self.assertIn(f"model repository {self.dir}: 6 models, 6 of 8 versions ready", self.server.log_text())
        self.assertIn('model "broken"', self.server.log_text())  # the failure is logged at startup

    def test_versions_latest_by_default_and_each_on_request(self):
        x = h.sample(np.float32, (2, 3), RNG)
        y = h.sample(np.float32, (2, 3), RNG)
        m = self.call("ModelMetadata", kp.ModelMetadataRequest(name="arith"))
        self.assertEqual((m.name, list(m.versions), m.platform), ("arith", ["1", "2"], "npuserve_graph"))
        latest = self.call("ModelInfer", raw_infer("arith", {"x": x, "y": y}))
        self.assertEqual(latest.model_version, "2")
        np.testing.assert_array_equal(output(latest), x - y)
        first = self.call("ModelInfer", raw_infer("arith", {"x": x, "y": y}, version="1"))
        self.assertEqual(first.model_version, "1")
        np.testing.assert_array_equal(output(first), x + y)
        self.fails("ModelInfer", raw_infer("arith", {"x": x, "y": y}, version="3"), grpc.StatusCode.NOT_FOUND,
                   'model "arith" has no version "3" (versions: 1, 2)')
        # Versions in numeric order: 10 is the latest, not 9.
        m = self.call("ModelMetadata", kp.ModelMetadataRequest(name="ordered"))
        self.assertEqual(list(m.versions), ["9", "10"])
        ten = self.call("ModelInfer", raw_infer("ordered", {"x": x, "y": y}))
        self.assertEqual(ten.model_version, "10")
        np.testing.assert_array_equal(output(ten), x * y)
        # Every tenant sees the repository.
        self.assertEqual(self.call("ModelInfer", raw_infer("arith", {"x": x, "y": y}), self.bob).model_version, "2")

    def test_unversioned_folder_and_onnx_file(self):
        x = np.load(os.path.join(h.SOURCE, "examples", "graphs", "mlp_x.npy"))
        resp = self.call("ModelInfer", raw_infer("mlp", {"x": x}))
        self.assertEqual(resp.model_version, "1")
        y = np.frombuffer(resp.raw_output_contents[0], np.float16).reshape(4, 10)
        np.testing.assert_allclose(y.astype(np.float64), h.mlp_reference(x), rtol=0, atol=4e-3)

        m = self.call("ModelMetadata", kp.ModelMetadataRequest(name="affine"))
        self.assertEqual((list(m.versions), m.platform), (["1"], "onnx_onnxv1"))
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in m.inputs], [("x", "FP32", [2, 3])])
        x = h.sample(np.float32, (2, 3), RNG)
        np.testing.assert_array_equal(output(self.call("ModelInfer", raw_infer("affine", {"x": x}))),
                                      x * np.float32(2) + self.bias)

    def test_a_model_that_did_not_load_says_why(self):
        index = self.call("RepositoryIndex", kp.RepositoryIndexRequest())
        entries = {(m.name, m.version): (m.state, m.reason) for m in index.models}
        self.assertEqual(entries[("arith", "1")], ("READY", ""))
        self.assertEqual(entries[("arith", "2")], ("READY", ""))
        self.assertEqual(entries[("affine", "1")], ("READY", ""))
        state, reason = entries[("broken", "1")]
        self.assertEqual(state, "UNAVAILABLE")
        self.assertIn("Frobnicate", reason)
        self.assertIn(os.path.join(self.dir, "broken", "1", "graph.json"), reason)
        self.assertEqual(entries[("empty", "1")][0], "UNAVAILABLE")
        self.assertIn("no model.onnx or graph.json in", entries[("empty", "1")][1])
        ready = {(m.name, m.version) for m in self.call("RepositoryIndex", kp.RepositoryIndexRequest(ready=True)).models}
        self.assertNotIn(("broken", "1"), ready)
        self.assertIn(("mlp", "1"), ready)

        self.assertFalse(self.call("ModelReady", kp.ModelReadyRequest(name="broken")).ready)
        self.fails("ModelInfer", raw_infer("broken", {"x": np.zeros(2, np.float32)}), grpc.StatusCode.UNAVAILABLE,
                   'model "broken" is not loaded: version 1:', "Frobnicate")
        self.fails("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name="broken"),
                   grpc.StatusCode.INVALID_ARGUMENT, 'model "broken" did not load: version 1:', "Frobnicate")

        http = Http(self.server.http_port, "tok-b")
        status, body = http.json("POST", "/v2/models/broken/infer",
                                 {"inputs": [{"name": "x", "shape": [2], "datatype": "FP32", "data": [1, 2]}]})
        self.assertEqual(status, 503)
        self.assertIn("is not loaded", body["error"])
        status, index = http.json("POST", "/v2/repository/index", {})
        self.assertIn({"name": "broken", "version": "1", "state": "UNAVAILABLE", "reason": reason}, index)

    def test_unload_load_and_a_model_added_after_start(self):
        write(os.path.join(self.dir, "late", "graph.json"), elementwise("late", "Mul"))
        x = h.sample(np.float32, (2, 3), RNG)
        index = {(m.name, m.version): m for m in self.call("RepositoryIndex", kp.RepositoryIndexRequest()).models}
        self.assertEqual(index[("late", "")].state, "UNAVAILABLE")
        self.assertIn("not loaded yet", index[("late", "")].reason)
        self.call("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name="late"))
        np.testing.assert_array_equal(output(self.call("ModelInfer", raw_infer("late", {"x": x, "y": x}))), x * x)

        http = Http(self.server.http_port, "tok-a")
        self.assertEqual(http.request("POST", "/v2/repository/models/late/unload", b"{}")[0], 200)
        self.assertFalse(self.call("ModelReady", kp.ModelReadyRequest(name="late")).ready)
        self.assertEqual(http.request("GET", "/v2/models/late/ready")[0], 400)
        self.fails("ModelInfer", raw_infer("late", {"x": x, "y": x}), grpc.StatusCode.UNAVAILABLE,
                   "unloaded (RepositoryModelLoad loads it again)")
        # A reload reads the disk again: the model changed meanwhile.
        write(os.path.join(self.dir, "late", "graph.json"), elementwise("late", "Add"))
        self.assertEqual(http.request("POST", "/v2/repository/models/late/load", b"")[0], 200)
        np.testing.assert_array_equal(output(self.call("ModelInfer", raw_infer("late", {"x": x, "y": x}))), x + x)

        for name in ("nope", "../arith", "arith/1"):
            self.fails("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name=name), grpc.StatusCode.NOT_FOUND,
                       "not in the model repository")
        self.fails("ModelMetadata", kp.ModelMetadataRequest(name="nope"), grpc.StatusCode.NOT_FOUND,
                   'model "nope" not found: not in the model repository, and no graph registered by this caller')

    def test_a_failed_reload_keeps_the_model_serving_as_it_was(self):
        x = h.sample(np.float32, (2, 3), RNG)
        write(os.path.join(self.dir, "steady", "1", "graph.json"), elementwise("steady", "Add"))
        self.call("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name="steady"))
        # Version 1 turns bad on disk and a version 2 appears that is bad too.
        write(os.path.join(self.dir, "steady", "1", "graph.json"), "{not json")
        write(os.path.join(self.dir, "steady", "2", "graph.json"), elementwise("steady", "Frobnicate"))
        self.fails("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name="steady"),
                   grpc.StatusCode.INVALID_ARGUMENT, 'model "steady" did not load: version 1:',
                   "is not an npu.v1.Graph in JSON", "version 2:", "Frobnicate",
                   "the versions loaded before keep serving")
        resp = self.call("ModelInfer", raw_infer("steady", {"x": x, "y": x}))
        self.assertEqual(resp.model_version, "1")
        np.testing.assert_array_equal(output(resp), x + x)
        self.assertEqual(list(self.call("ModelMetadata", kp.ModelMetadataRequest(name="steady")).versions), ["1"])
        # Fixed on disk: the reload replaces it, version 2 now the latest.
        write(os.path.join(self.dir, "steady", "1", "graph.json"), elementwise("steady", "Add"))
        write(os.path.join(self.dir, "steady", "2", "graph.json"), elementwise("steady", "Mul"))
        self.call("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name="steady"))
        resp = self.call("ModelInfer", raw_infer("steady", {"x": x, "y": x}))
        self.assertEqual(resp.model_version, "2")
        np.testing.assert_array_equal(output(resp), x * x)
        # Once unloaded there is nothing to keep: a failed load leaves it UNAVAILABLE with the new reason.
        self.call("RepositoryModelUnload", kp.RepositoryModelUnloadRequest(model_name="steady"))
        write(os.path.join(self.dir, "steady", "2", "graph.json"), "[]")
        self.fails("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name="steady"),
                   grpc.StatusCode.INVALID_ARGUMENT, "version 2:", "is not an npu.v1.Graph in JSON")
        self.fails("ModelInfer", raw_infer("steady", {"x": x, "y": x}, version="2"), grpc.StatusCode.UNAVAILABLE,
                   'model "steady" version "2" is not loaded', "is not an npu.v1.Graph in JSON")

    def test_the_model_config_endpoint_answers_tritons_model_config_as_json(self):
        http = Http(self.server.http_port, "tok-a")
        status, config = http.json("GET", "/v2/models/arith/config")
        self.assertEqual(status, 200, config)
        self.assertEqual(config["name"], "arith")
        self.assertIn("all", config["version_policy"])
        self.assertEqual([(t["name"], t["data_type"]) for t in config["input"]], [("x", "TYPE_FP32"), ("y", "TYPE_FP32")])
        # A model without a config.pbtxt: its config from the model, ONNX as Triton names it.
        status, config = http.json("GET", "/v2/models/affine/config")
        self.assertEqual((status, config["platform"]), (200, "onnxruntime_onnx"))
        self.assertEqual(config["input"][0]["dims"], ["2", "3"])  # int64s, as protobuf's JSON mapping writes them
        self.assertEqual(http.json("GET", "/v2/models/nothing/config")[0], 404)

    def test_grpc_model_config_is_the_config_http_answers(self):
        # Triton's gRPC ModelConfig: the same message the HTTP endpoint writes as JSON.
        http = Http(self.server.http_port, "tok-a")
        for name in ("arith", "affine"):
            resp = self.call("ModelConfig", kp.ModelConfigRequest(name=name))
            self.assertEqual(resp.config.name, name)
            status, config = http.json("GET", f"/v2/models/{name}/config")
            self.assertEqual(status, 200, config)
            self.assertEqual(json_format.MessageToDict(resp.config, preserving_proto_field_name=True), config)
        self.assertEqual(self.call("ModelConfig", kp.ModelConfigRequest(name="affine")).config.platform,
                         "onnxruntime_onnx")
        self.fails("ModelConfig", kp.ModelConfigRequest(name="nothing"), grpc.StatusCode.NOT_FOUND, "nothing")

    def test_a_config_npuserve_cannot_serve_keeps_the_model_from_loading(self):
        write(os.path.join(self.dir, "tensorrt", "1", "graph.json"), elementwise("t", "Add"))
        write(os.path.join(self.dir, "tensorrt", "config.pbtxt"),
              'name: "tensorrt"\nplatform: "tensorrt_plan"\n')
        write(os.path.join(self.dir, "unserved", "1", "graph.json"), elementwise("u", "Add"))
        write(os.path.join(self.dir, "unserved", "config.pbtxt"), 'name: "unserved"\noptimization { }\n')
        for name, fragment in [("tensorrt", 'platform "tensorrt_plan" is not served'),
                               ("unserved", "unserved/config.pbtxt:2:")]:
            with self.subTest(name):
                self.fails("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name=name),
                           grpc.StatusCode.INVALID_ARGUMENT, f'model "{name}" did not load', fragment)

    def test_each_kind_of_bad_model_folder_says_what_is_wrong(self):
        cases = {
            "garbage_onnx": ("1/model.onnx", b"\x08\x07garbage that is no ModelProto",
                             "garbage_onnx/1/model.onnx: the ONNX model is not a valid onnx.ModelProto"),
            "two_files": ("1/model.onnx", None, "holds both model.onnx and graph.json; keep one"),
            "bad_json": ("1/graph.json", b'{"nodes": 5}', "is not an npu.v1.Graph in JSON"),
            "no_file": ("1/weights.bin", b"\0", "no model.onnx or graph.json in"),
            "bad_shape": ("1/graph.json", h.graph_json("s", [("x", np.float32, (1 << 30, 1 << 30))],
                                                       [h.node("n", "Neg", ["x"], ["y"])], ["y"]).encode(),
                          'graph.json: graph input "x": shape [1073741824,1073741824] has more than'),
        }
        for name, (rel, data, fragment) in cases.items():
            path = os.path.join(self.dir, name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if name == "two_files":
                onnx_affine(path)
                write(os.path.join(self.dir, name, "1", "graph.json"), elementwise(name, "Add"))
            else:
                with open(path, "wb") as f:
                    f.write(data)
            with self.subTest(name):
                self.fails("RepositoryModelLoad", kp.RepositoryModelLoadRequest(model_name=name),
                           grpc.StatusCode.INVALID_ARGUMENT, f'model "{name}" did not load: version 1:', fragment)
                entry = {m.name: m for m in self.call("RepositoryIndex", kp.RepositoryIndexRequest()).models}[name]
                self.assertEqual(entry.state, "UNAVAILABLE")
                self.assertIn(fragment, entry.reason)
                self.assertTrue(self.call("ServerLive", kp.ServerLiveRequest()).live)


if __name__ == "__main__":
    unittest.main()
