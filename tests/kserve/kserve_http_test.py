"""KServe v2 HTTP/REST against a real npu-server with Python's http.client
(and curl when installed): health, metadata, inference with JSON tensors and
with the binary tensor data extension, the repository extension, tenancy, and
the {"error": ...} answer of every bad request."""
import http.client
import json
import os
import shutil
import subprocess
import sys
import unittest

import grpc
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import kserve_harness as h  # noqa: E402

h.generate_stubs()
from npu.v1 import graph_pb2, runtime_pb2, runtime_pb2_grpc  # noqa: E402

RNG = np.random.default_rng(61)
NUMPY = {"FP16": np.float16, "FP32": np.float32, "INT32": np.int32, "INT8": np.int8, "BOOL": np.bool_,
         "INT64": np.int64}


class Http:
    """One connection; request() returns (status, headers, body bytes)."""

    def __init__(self, port, token=None):
        self.port, self.token = port, token

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = dict(headers or {})
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data

    def json(self, method, path, body=None, headers=None):
        status, hdrs, data = self.request(method, path, body, headers)
        return status, (json.loads(data) if data else None)

    def infer(self, model, inputs, binary_inputs=(), outputs=None, parameters=None, version=None):
        """inputs: {name: array}; those named in binary_inputs travel as binary data."""
        doc = {"id": "r1", "inputs": []}
        blobs = []
        for name, a in inputs.items():
            t = {"name": name, "shape": list(a.shape), "datatype": h.KSERVE_DTYPE[a.dtype.type]}
            if name in binary_inputs:
                t["parameters"] = {"binary_data_size": a.nbytes}
                blobs.append(a.tobytes())
            else:
                t["data"] = a.tolist()
            doc["inputs"].append(t)
        if outputs is not None:
            doc["outputs"] = outputs
        if parameters is not None:
            doc["parameters"] = parameters
        header = json.dumps(doc).encode()
        headers = {"Content-Type": "application/octet-stream" if blobs else "application/json"}
        if blobs:
            headers["Inference-Header-Content-Length"] = str(len(header))
        path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
        return self.request("POST", path, header + b"".join(blobs), headers)


def decode_infer(headers, body):
    """The response JSON and its outputs as arrays (JSON data or binary data)."""
    n = int(headers.get("inference-header-content-length", len(body)))
    doc = json.loads(body[:n])
    offset = n
    arrays = {}
    for o in doc["outputs"]:
        dtype = NUMPY[o["datatype"]]
        size = o.get("parameters", {}).get("binary_data_size")
        if size is None:
            arrays[o["name"]] = np.array(o["data"], dtype).reshape(o["shape"])
        else:
            arrays[o["name"]] = np.frombuffer(body[offset:offset + size], dtype).reshape(o["shape"])
            offset += size
    assert offset == len(body), (offset, len(body))
    return doc, arrays


class KserveHttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = h.Server("--max_message_bytes=1048576")
        cls.http = Http(cls.server.http_port)
        channel = grpc.insecure_channel(cls.server.grpc_target)
        runtime = runtime_pb2_grpc.RuntimeServiceStub(channel)

        def reg(text):
            return h.register(runtime, runtime_pb2, graph_pb2, text)

        cls.mlp_id = reg(h.mlp_json())
        reg(h.transpose_graph("transposes", h.TRANSPOSE_TYPES + [np.float16]))
        reg(h.graph_json("add", [("x", np.float32, (2, 3)), ("y", np.float32, (2, 3))],
                         [h.node("add", "Add", ["x", "y"], ["z"]), h.node("neg", "Neg", ["z"], ["n"])], ["z", "n"]))
        reg(h.graph_json("half", [("x", np.float16, (8,))], [h.node("i", "Identity", ["x"], ["y"])], ["y"]))
        # Long enough to be stopped by a timeout: 24 chained 512^3 fp16 MatMuls.
        nodes = [h.node(f"mm{i}", "MatMul", [f"v{i}", "w"], [f"v{i + 1}"]) for i in range(24)]
        w = np.full((512, 512), 1 / 512, np.float16)
        reg(h.graph_json("slow", [("v0", np.float16, (512, 512))], nodes, ["v24"],
                         [{"name": "w", "tensor": {"dtype": "FLOAT16", "shape": [512, 512],
                                                   "data": __import__("base64").b64encode(w.tobytes()).decode()}}]))
        channel.close()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def assertError(self, response, status, *fragments):
        got, body = response[0], response[-1]
        if isinstance(body, bytes):
            body = json.loads(body)
        self.assertEqual(got, status, body)
        self.assertEqual(set(body), {"error"})
        for f in fragments:
            self.assertIn(f, body["error"])
        self.assertEqual(self.http.request("GET", "/v2/health/live")[0], 200)  # still serving

    def test_health(self):
        # 200 is the answer; the body repeats it as KServe's REST client reads it.
        self.assertEqual(self.http.json("GET", "/v2/health/live"), (200, {"live": True}))
        self.assertEqual(self.http.json("GET", "/v2/health/ready"), (200, {"ready": True}))
        for path in ("/v2/models/add/ready", "/v2/models/add/versions/1/ready"):
            self.assertEqual(self.http.json("GET", path), (200, {"name": "add", "version": "1", "ready": True}), path)
        self.assertError(self.http.json("GET", "/v2/models/nope/ready"), 400, 'not ready: model "nope" not found')
        self.assertError(self.http.json("GET", "/v2/models/add/versions/2/ready"), 400, 'no version "2"')

    def test_server_and_model_metadata(self):
        status, m = self.http.json("GET", "/v2")
        self.assertEqual(status, 200)
        self.assertEqual(m["name"], "npuserve")
        self.assertEqual(set(m["extensions"]), {"model_repository", "binary_tensor_data", "parameters"})
        status, m = self.http.json("GET", "/v2/models/mlp")
        self.assertEqual(status, 200)
        self.assertEqual(m, {"name": "mlp", "versions": ["1"], "platform": "npuserve_graph",
                             "inputs": [{"name": "x", "datatype": "FP16", "shape": [4, 64]}],
                             "outputs": [{"name": "y", "datatype": "FP16", "shape": [4, 10]}]})
        self.assertEqual(self.http.json("GET", f"/v2/models/{self.mlp_id}/versions/1")[1]["inputs"], m["inputs"])
        self.assertError(self.http.json("GET", "/v2/models/nope"), 404, 'model "nope" not found')
        self.assertError(self.http.json("GET", "/v2/models/mlp/versions/9"), 404, 'no version "9"')

    def test_json_infer_is_exact_for_float32_in_nested_and_flat_form(self):
        x = h.sample(np.float32, (2, 3), RNG)
        y = h.sample(np.float32, (2, 3), RNG)
        status, headers, body = self.http.infer("add", {"x": x, "y": y})
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["content-type"], "application/json")
        doc, out = decode_infer(headers, body)
        self.assertEqual((doc["model_name"], doc["model_version"], doc["id"]), ("add", "1", "r1"))
        self.assertEqual([(o["name"], o["datatype"], o["shape"]) for o in doc["outputs"]],
                         [("z", "FP32", [2, 3]), ("n", "FP32", [2, 3])])
        np.testing.assert_array_equal(out["z"], x + y)
        np.testing.assert_array_equal(out["n"], -(x + y))
        self.assertGreater(doc["parameters"]["npu_device_time_ns"], 0)
        self.assertEqual(doc["parameters"]["npu_device"], "npu:0")

        flat = {"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32", "data": x.flatten().tolist()},
                           {"name": "y", "shape": [2, 3], "datatype": "FP32", "data": y.flatten().tolist()}],
                "outputs": [{"name": "n"}], "parameters": {"npu_profile": True}}
        status, doc = self.http.json("POST", "/v2/models/add/versions/1/infer", flat)
        self.assertEqual(status, 200, doc)
        self.assertEqual([o["name"] for o in doc["outputs"]], ["n"])
        np.testing.assert_array_equal(np.array(doc["outputs"][0]["data"], np.float32).reshape(2, 3), -(x + y))
        profile = json.loads(doc["parameters"]["npu_profile"])
        self.assertEqual([n["op_type"] for n in profile["nodes"]], ["Add", "Neg"])
        self.assertNotIn("id", doc)

    def test_binary_data_in_and_out_for_every_datatype(self):
        types = h.TRANSPOSE_TYPES + [np.float16]
        arrays = {f"in_{h.KSERVE_DTYPE[t].lower()}": h.sample(t, (2, 3), RNG) for t in types}
        want = {"out" + n[2:]: a.T for n, a in arrays.items()}
        # All inputs binary, all outputs binary.
        status, headers, body = self.http.infer("transposes", arrays, binary_inputs=set(arrays),
                                                parameters={"binary_data_output": True})
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["content-type"], "application/octet-stream")
        doc, out = decode_infer(headers, body)
        self.assertTrue(all("data" not in o for o in doc["outputs"]))
        for name, a in want.items():
            self.assertEqual(out[name].tobytes(), a.tobytes(), name)
        # Half the inputs binary; outputs: one asked binary, the rest JSON (FP16 as numbers).
        outputs = [{"name": n, "parameters": {"binary_data": n == "out_int64"}} for n in want]
        status, headers, body = self.http.infer("transposes", arrays, binary_inputs={"in_fp32", "in_int8", "in_fp16"},
                                                outputs=outputs)
        self.assertEqual(status, 200, body)
        doc, out = decode_infer(headers, body)
        self.assertEqual([("data" in o) for o in doc["outputs"]], [n != "out_int64" for n in want])
        for name, a in want.items():
            np.testing.assert_array_equal(out[name], a, name)

    def test_fp16_json_values_round_to_the_nearest_half(self):
        # 1 + 2^-11 + 2^-40 lies just above the half-way point between 1 and 1 + 2^-10:
        # rounding it through float32 first would land on the tie and go to 1.
        values = [1 + 2 ** -11 + 2 ** -40, 0.1, -2.5, 65504.0, 65519.0, 6e-8, -0.0, 1 + 2 ** -11]
        doc = {"inputs": [{"name": "x", "shape": [8], "datatype": "FP16", "data": values}],
               "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}
        status, headers, body = self.http.request("POST", "/v2/models/half/infer", json.dumps(doc).encode())
        self.assertEqual(status, 200, body)
        _, out = decode_infer(headers, body)
        want = np.array(values, np.float64).astype(np.float16)  # numpy rounds float64 -> half directly
        self.assertEqual(out["y"].tobytes(), want.tobytes())
        self.assertEqual(out["y"][0], np.float16(1 + 2 ** -10))
        doc["inputs"][0]["data"][4] = 65520.0
        self.assertError(self.http.json("POST", "/v2/models/half/infer", doc), 400,
                         "element 4 of data (65520.0) is beyond FP16's largest value 65504")

    def test_fp16_outputs_come_back_as_json_numbers(self):
        x = h.sample(np.float16, (8,), RNG)
        doc = {"inputs": [{"name": "x", "shape": [8], "datatype": "FP16", "parameters": {"binary_data_size": 16}}]}
        header = json.dumps(doc).encode()
        status, headers, body = self.http.request("POST", "/v2/models/half/infer", header + x.tobytes(),
                                                  {"Inference-Header-Content-Length": str(len(header))})
        self.assertEqual(status, 200, body)
        _, out = decode_infer(headers, body)
        np.testing.assert_array_equal(out["y"], x)

    def test_json_coercion_and_its_limits(self):
        int8 = np.array([[-128, 127, 0], [1, -1, 5]], np.int8)
        doc = {"inputs": [{"name": "in_int8", "shape": [2, 3], "datatype": "INT8", "data": [[-128, 127.0, 0], [1, -1, 5]]}],
               "outputs": [{"name": "out_int8"}]}
        ok = self.transposes_with(doc)
        status, body = self.http.json("POST", "/v2/models/transposes/infer", ok)
        self.assertEqual(status, 200, body)
        out = {o["name"]: o for o in body["outputs"]}
        self.assertEqual(out["out_int8"]["data"], int8.T.flatten().tolist())

        def bad(inputs_patch, *fragments):
            d = self.transposes_with({"inputs": [inputs_patch]})
            self.assertError(self.http.json("POST", "/v2/models/transposes/infer", d), 400, *fragments)

        bad({"name": "in_int8", "shape": [2, 3], "datatype": "INT8", "data": [1, 2, 3, 4, 5, 128]},
            'input "in_int8": element 5 of data (128) is outside INT8\'s range -128..127')
        bad({"name": "in_int32", "shape": [2, 3], "datatype": "INT32", "data": [1, 2, 3, 4, 5, 1.5]},
            "element 5 of data (1.5) is not an integer")
        bad({"name": "in_bool", "shape": [2, 3], "datatype": "BOOL", "data": [True, False, 2, True, True, True]},
            "element 2 of data (2) is not a boolean")
        bad({"name": "in_fp32", "shape": [2, 3], "datatype": "FP32", "data": [1, 2, "3", 4, 5, 6]},
            'element 2 of data ("3") is not a number')
        bad({"name": "in_fp32", "shape": [2, 3], "datatype": "FP32", "data": [1, 2, 3]},
            "FP32[2,3] has 6 elements; data has 3")
        bad({"name": "in_fp32", "shape": [2, 3], "datatype": "FP32", "data": [[[[1, 2, 3]]]]},
            "nests arrays deeper than the tensor's 2 dimension(s)")
        bad({"name": "in_fp32", "shape": [2, 3], "datatype": "FP32"}, 'has neither "data" nor a "binary_data_size"')
        bad({"name": "in_fp32", "shape": [2, "3"], "datatype": "FP32", "data": [1]}, "shape dimension \"3\" is not an integer")
        bad({"name": "in_fp32", "shape": [2, 3], "datatype": "UINT16", "data": [1]}, "datatype UINT16 is not supported")
        bad({"name": "in_fp32", "shape": [2, 3], "datatype": "FP32", "data": [1] * 6, "parameters": {"p": [1]}},
            'parameter "p" must be a string, number or boolean')

    def transposes_with(self, doc):
        """`doc` with every transposes input it leaves out added as zeros."""
        given = {i["name"] for i in doc["inputs"]}
        for t in h.TRANSPOSE_TYPES + [np.float16]:
            name = f"in_{h.KSERVE_DTYPE[t].lower()}"
            if name not in given:
                zeros = [False] * 6 if t == np.bool_ else [0] * 6
                doc["inputs"].append({"name": name, "shape": [2, 3], "datatype": h.KSERVE_DTYPE[t], "data": zeros})
        return doc

    def test_every_bad_request_gets_an_error_object(self):
        x = h.sample(np.float32, (2, 3), RNG)
        post = lambda path, body, headers=None: self.http.request("POST", path, body, headers)  # noqa: E731
        self.assertError(post("/v2/models/add/infer", b"{\"inputs\": ["), 400, "not valid JSON")
        self.assertError(post("/v2/models/add/infer", b"[]"), 400, "must be a JSON object")
        self.assertError(post("/v2/models/add/infer", b"{}"), 400, 'needs "inputs"')
        self.assertError(post("/v2/models/add/infer", b'{"inputs": [], "id": 5}'), 400, '"id" must be a string')
        self.assertError(self.http.infer("nope", {"x": x}), 404, 'model "nope" not found')
        self.assertError(self.http.infer("add", {"x": x}), 400, 'input "y" of model "add" is missing')
        self.assertError(self.http.infer("add", {"x": x, "y": x.astype(np.int32)}), 400,
                         'input "y" is INT32[2,3]; model "add" takes FP32[2,3]')
        self.assertError(self.http.infer("add", {"x": x, "y": x}, outputs=[{"name": "q"}]), 400,
                         'model "add" has no output "q"')
        self.assertError(self.http.infer("add", {"x": x, "y": x}, parameters={"npu_device": 1}), 400,
                         'parameter "npu_device" must be a string')
        self.assertError(self.http.infer("add", {"x": x, "y": x}, parameters={"binary_data_output": "yes"}), 400,
                         'parameter "binary_data_output" must be a bool')
        self.assertError(self.http.infer("add", {"x": x, "y": x}, parameters={"timeout": -5}), 400,
                         '"timeout" must be a positive integer')

        # The binary data extension's framing.
        doc = json.dumps({"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32",
                                      "parameters": {"binary_data_size": 24}},
                                     {"name": "y", "shape": [2, 3], "datatype": "FP32",
                                      "data": x.flatten().tolist()}]}).encode()
        self.assertError(post("/v2/models/add/infer", doc), 400, "no Inference-Header-Content-Length")
        self.assertError(post("/v2/models/add/infer", doc + x.tobytes()), 400, "not valid JSON",
                         "binary data after the JSON needs the Inference-Header-Content-Length header")
        n = str(len(doc))
        self.assertError(post("/v2/models/add/infer", doc + x.tobytes()[:20], {"Inference-Header-Content-Length": n}),
                         400, "binary_data_size 24 runs past the end of the 20 bytes of binary data")
        self.assertError(post("/v2/models/add/infer", doc + x.tobytes() + b"xx",
                              {"Inference-Header-Content-Length": n}), 400,
                         "26 bytes of binary data follow the JSON, but the inputs' binary_data_size parameters add "
                         "up to 24")
        self.assertError(post("/v2/models/add/infer", doc, {"Inference-Header-Content-Length": "99999"}), 400,
                         "Inference-Header-Content-Length is 99999 but the body has only")
        self.assertError(post("/v2/models/add/infer", doc, {"Inference-Header-Content-Length": "ten"}), 400,
                         'Inference-Header-Content-Length "ten" is not a byte count')
        wrong = doc.replace(b'"binary_data_size": 24', b'"binary_data_size": 20')
        self.assertError(post("/v2/models/add/infer", wrong + x.tobytes()[:20],
                              {"Inference-Header-Content-Length": str(len(wrong))}), 400,
                         'input "x": FP32[2,3] is 24 bytes; its binary data (binary_data_size 20) has 20')

        # What httplib answers itself: unknown endpoints, bodies past --max_message_bytes.
        self.assertError(self.http.request("GET", "/v2/models/add/infer"), 404, "no endpoint GET /v2/models/add/infer")
        self.assertError(self.http.request("GET", "/v3"), 404, "no endpoint GET /v3")
        self.assertError(post("/v2/models/add/infer", b" " * (1 << 21)), 413, "larger than the server's limit")

    def test_hostile_bodies_do_not_hurt_the_server(self):
        deep = b"[" * 200000 + b"]" * 200000
        body = b'{"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32", "data": ' + deep + b"}]}"
        self.assertError(self.http.request("POST", "/v2/models/add/infer", body), 400, "nests arrays deeper")
        self.assertError(self.http.request("POST", "/v2/models/add/infer", b'{"inputs": "\xff\xfe"}'), 400,
                         "not valid JSON")
        status, _, body = self.http.infer("add", {"q" * 20000: np.zeros((2, 3), np.float32)})
        self.assertEqual(status, 400)
        self.assertIn('has no input "qqqq', json.loads(body)["error"])
        self.assertIn("(20000 bytes)", json.loads(body)["error"])
        self.assertLess(len(body), 4200)
        # A model name of bytes that are not UTF-8 is answered, not thrown on.
        self.assertError(self.http.request("GET", "/v2/models/%FF%FE"), 404, "not found")

    def test_huge_declared_shapes_are_refused_before_any_allocation(self):
        x = h.sample(np.float32, (2, 3), RNG)
        post = lambda doc, headers=None: self.http.request("POST", "/v2/models/add/infer", doc, headers)  # noqa: E731
        y = {"name": "y", "shape": [2, 3], "datatype": "FP32", "data": x.flatten().tolist()}
        huge = [1 << 20, 1 << 20]  # 2^40 FP32 elements: 4 TiB
        self.assertError(post({"inputs": [{"name": "x", "shape": huge, "datatype": "FP32", "data": [1.0]}, y]}), 400,
                         'input "x": FP32[1048576,1048576] has 1099511627776 elements; data has 1')
        doc = json.dumps({"inputs": [{"name": "x", "shape": huge, "datatype": "FP32",
                                      "parameters": {"binary_data_size": 24}}, y]}).encode()
        self.assertError(post(doc + x.tobytes(), {"Inference-Header-Content-Length": str(len(doc))}), 400,
                         'input "x": FP32[1048576,1048576] is 4398046511104 bytes')
        doc = json.dumps({"inputs": [{"name": "x", "shape": huge, "datatype": "FP32",
                                      "parameters": {"binary_data_size": 1 << 42}}, y]}).encode()
        self.assertError(post(doc + x.tobytes(), {"Inference-Header-Content-Length": str(len(doc))}), 400,
                         "binary_data_size 4398046511104 runs past the end of the 24 bytes of binary data")
        for shape, fragment in (([1 << 21, 1 << 20], "[2097152,1048576] has more than 1099511627776 elements"),
                                ([1 << 62, 1 << 62, 4], "has more than 1099511627776 elements"),
                                ([1 << 64], "shape dimension"), ([1] * 9, "rank 9 exceeds the maximum of 8")):
            self.assertError(post({"inputs": [{"name": "x", "shape": shape, "datatype": "FP32", "data": [1.0]}, y]}),
                             400, fragment)
        # And the server still answers a good request with the right numbers.
        status, headers, body = self.http.infer("add", {"x": x, "y": x})
        self.assertEqual(status, 200, body)
        np.testing.assert_array_equal(decode_infer(headers, body)[1]["z"], x + x)

    def test_timeout_parameter_stops_a_long_run(self):
        v0 = np.ones((512, 512), np.float16)
        status, _, body = self.http.infer("slow", {"v0": v0}, binary_inputs={"v0"}, parameters={"timeout": 20000},
                                          outputs=[{"name": "v24", "parameters": {"binary_data": True}}])
        self.assertEqual(status, 504, body)
        self.assertIn("passed its timeout parameter (20000 us)", json.loads(body)["error"])

    def test_repository_extension(self):
        status, index = self.http.json("POST", "/v2/repository/index", {})
        self.assertEqual(status, 200)
        self.assertIn({"name": self.mlp_id, "version": "1", "state": "READY"}, index)
        self.assertEqual(self.http.json("POST", "/v2/repository/index", {"ready": True})[1], index)
        self.assertEqual(self.http.request("POST", "/v2/repository/index", b"", {"Content-Length": "0"})[0], 200)
        self.assertError(self.http.json("POST", "/v2/repository/index", {"ready": "yes"}), 400,
                         '"ready" must be a boolean')
        self.assertEqual(self.http.request("POST", "/v2/repository/models/mlp/load", b"{}")[:1], (200,))
        self.assertError(self.http.json("POST", "/v2/repository/models/mlp/load",
                                        {"parameters": {"file:1/model.onnx": "AAAA"}}), 501,
                         'load parameter "file:1/model.onnx"')
        self.assertError(self.http.json("POST", "/v2/repository/models/nope/unload", {}), 404, 'model "nope"')

        channel = grpc.insecure_channel(self.server.grpc_target)
        h.register(runtime_pb2_grpc.RuntimeServiceStub(channel), runtime_pb2, graph_pb2,
                   h.graph_json("gone", [("a", np.int8, (1,))], [h.node("i", "Identity", ["a"], ["b"])], ["b"]))
        channel.close()
        self.assertEqual(self.http.request("GET", "/v2/models/gone/ready")[0], 200)
        self.assertEqual(self.http.request("POST", "/v2/repository/models/gone/unload", b"")[0], 200)
        self.assertEqual(self.http.request("GET", "/v2/models/gone/ready")[0], 400)

    @unittest.skipIf(shutil.which("curl") is None, "curl is not installed")
    def test_curl(self):
        base = f"http://127.0.0.1:{self.server.http_port}"
        out = subprocess.run(["curl", "-sS", "-f", f"{base}/v2/health/ready"], capture_output=True, check=True)
        self.assertEqual(json.loads(out.stdout), {"ready": True})
        body = json.dumps({"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32", "data": [1, 2, 3, 4, 5, 6]},
                                      {"name": "y", "shape": [2, 3], "datatype": "FP32",
                                       "data": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]}]})
        out = subprocess.run(["curl", "-sS", "-f", "-H", "Content-Type: application/json", "-d", body,
                              f"{base}/v2/models/add/infer"], capture_output=True, check=True)
        doc = json.loads(out.stdout)
        self.assertEqual(doc["outputs"][0]["data"], [1.5, 2.5, 3.5, 4.5, 5.5, 6.5])
        out = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", f"{base}/v2/models/nope"],
                             capture_output=True, check=True)
        self.assertEqual(out.stdout, b"404")


class KserveHttpTenancyTest(unittest.TestCase):
    def test_bearer_tokens_and_isolation(self):
        with h.server_with_tokens("tok-a alice\ntok-b bob\n") as server:
            channel = grpc.insecure_channel(server.grpc_target)
            gid = h.register(runtime_pb2_grpc.RuntimeServiceStub(channel), runtime_pb2, graph_pb2,
                             h.graph_json("secret", [("a", np.int32, (2,))],
                                          [h.node("i", "Identity", ["a"], ["b"])], ["b"]), token="tok-a")
            channel.close()
            anonymous, alice, bob = Http(server.http_port), Http(server.http_port, "tok-a"), Http(server.http_port, "tok-b")
            self.assertEqual(anonymous.request("GET", "/v2/health/ready")[0], 200)
            status, headers, body = anonymous.request("GET", "/v2/models/secret")
            self.assertEqual(status, 401)
            self.assertEqual(headers["www-authenticate"], "Bearer")
            self.assertIn("error", json.loads(body))
            self.assertNotIn(b"tok-", body)
            self.assertEqual(Http(server.http_port, "nope").request("GET", "/v2")[0], 401)

            a = np.array([3, 4], np.int32)
            status, headers, body = alice.infer("secret", {"a": a})
            self.assertEqual(status, 200, body)
            np.testing.assert_array_equal(decode_infer(headers, body)[1]["b"], a)
            self.assertEqual(bob.json("POST", "/v2/repository/index", {}), (200, []))
            for name in ("secret", gid):
                for response in (bob.infer(name, {"a": a}), bob.request("GET", f"/v2/models/{name}"),
                                 bob.request("POST", f"/v2/repository/models/{name}/unload", b"")):
                    self.assertEqual(response[0], 404)
                    self.assertEqual(json.loads(response[-1])["error"],
                                     f'model "{name}" not found: no graph registered by this caller has that id '
                                     "or name")
            self.assertEqual(alice.request("GET", "/v2/models/secret/ready")[0], 200)


class KserveHttpsTest(unittest.TestCase):
    @unittest.skipIf(shutil.which("openssl") is None, "openssl is not installed")
    def test_tls_flags_serve_https_on_the_http_port(self):
        import ssl
        import tempfile
        folder = tempfile.mkdtemp(prefix="kserve_tls_")
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        server = h.Server(f"--tls_cert={cert}", f"--tls_key={key}")
        try:
            context = ssl.create_default_context(cafile=cert)
            conn = http.client.HTTPSConnection("127.0.0.1", server.http_port, context=context, timeout=30)
            conn.request("GET", "/v2")
            resp = conn.getresponse()
            self.assertEqual(resp.status, 200)
            self.assertEqual(json.loads(resp.read())["name"], "npuserve")
            conn.close()
            plain = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
            with self.assertRaises((ConnectionError, http.client.HTTPException, OSError)):
                plain.request("GET", "/v2")
                plain.getresponse().read()
        finally:
            server.stop()
            shutil.rmtree(folder)


if __name__ == "__main__":
    unittest.main()
