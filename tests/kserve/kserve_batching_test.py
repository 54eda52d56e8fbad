"""Dynamic batching and Triton's metrics over real loopback: a repository MLP
whose config.pbtxt asks for dynamic batching, called by concurrent KServe
gRPC clients, KServe HTTP and npu.v1 Run by model name. Each answer is bit for
bit the unbatched model's, responses say how they were executed, and
/metrics (scraped over HTTP) counts Triton's nv_inference_* per model and
version as Triton defines them."""
import base64
import http.client
import os
import re
import shutil
import sys
import tempfile
import threading
import unittest

import grpc
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import kserve_harness as h  # noqa: E402

h.generate_stubs()
from kserve import grpc_service_pb2 as kp  # noqa: E402
from kserve import grpc_service_pb2_grpc as kg  # noqa: E402
from npu.v1 import runtime_pb2, runtime_pb2_grpc, tensor_pb2  # noqa: E402

from kserve_http_test import Http, decode_infer  # noqa: E402

RNG = np.random.default_rng(5)
IN, HIDDEN, OUT = 32, 48, 16
CALLERS = 8


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def initializer(name, a):
    return {"name": name, "tensor": {"dtype": "FLOAT32", "shape": list(a.shape),
                                     "data": base64.b64encode(a.astype(np.float32).tobytes()).decode()}}


def mlp_graph():
    """relu(x w1 + b1) w2 + b2, random weights, a dynamic batch dim."""
    w = {"w1": RNG.standard_normal((IN, HIDDEN)), "b1": RNG.standard_normal(HIDDEN),
         "w2": RNG.standard_normal((HIDDEN, OUT)), "b2": RNG.standard_normal(OUT)}
    nodes = [h.node("fc1", "MatMul", ["x", "w1"], ["h1"]), h.node("add1", "Add", ["h1", "b1"], ["h2"]),
             h.node("relu", "Relu", ["h2"], ["h3"]), h.node("fc2", "MatMul", ["h3", "w2"], ["h4"]),
             h.node("add2", "Add", ["h4", "b2"], ["y"])]
    return h.graph_json("mlp", [("x", np.float32, (-1, IN))], nodes, ["y"],
                        [initializer(k, v) for k, v in w.items()])


def infer_request(model, x):
    req = kp.ModelInferRequest(model_name=model)
    req.inputs.add(name="x", datatype="FP32", shape=x.shape)
    req.raw_input_contents.append(x.tobytes())
    return req


def scrape(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics")
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    assert resp.status == 200, text
    return text


def metric(text, name, model):
    m = re.search(rf'^{name}\{{model="{model}",version="1"\}} (\d+)$', text, re.M)
    return int(m.group(1)) if m else None


class DynamicBatchingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kserve_batching_")
        graph = mlp_graph()
        write(os.path.join(cls.dir, "mlp", "1", "graph.json"), graph)
        # A delay far past the time the callers take to send: batches form by size.
        write(os.path.join(cls.dir, "mlp", "config.pbtxt"),
              "max_batch_size: 8\ndynamic_batching { preferred_batch_size: [ 4 ] "
              "max_queue_delay_microseconds: 300000 }\n")
        write(os.path.join(cls.dir, "alone", "1", "graph.json"), graph)
        cls.server = h.Server(f"--model_repository={cls.dir}", "--metrics_listen=127.0.0.1:0", "--threads=2")
        cls.metrics_port = cls.server._wait_for(r"metrics on http://127\.0\.0\.1:(\d+)/metrics")
        cls.channel = grpc.insecure_channel(cls.server.grpc_target)
        cls.k = kg.GRPCInferenceServiceStub(cls.channel)
        cls.runtime = runtime_pb2_grpc.RuntimeServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        try:
            cls.server.stop()
        finally:
            shutil.rmtree(cls.dir)

    def concurrent(self, model, xs):
        """Sends every x at once from its own thread; the responses in order."""
        out = [None] * len(xs)
        start = threading.Barrier(len(xs))

        def call(i):
            start.wait()
            out[i] = self.k.ModelInfer(infer_request(model, xs[i]), timeout=60)

        threads = [threading.Thread(target=call, args=(i,)) for i in range(len(xs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        return out

    def test_concurrent_callers_share_runs_and_get_their_unbatched_bits(self):
        before = scrape(self.metrics_port)
        xs = [RNG.standard_normal((1 + i % 3, IN)).astype(np.float32) for i in range(CALLERS)]
        got = self.concurrent("mlp", xs)
        for i, x in enumerate(xs):
            alone = self.k.ModelInfer(infer_request("alone", x), timeout=60)
            self.assertEqual(got[i].raw_output_contents[0], alone.raw_output_contents[0], f"request {i}")
            self.assertEqual(list(got[i].outputs[0].shape), [x.shape[0], OUT])
            self.assertEqual(alone.parameters["npu_batch_requests"].int64_param, 1)
        sizes = [r.parameters["npu_batch_size"].int64_param for r in got]
        shared = [r.parameters["npu_batch_requests"].int64_param for r in got]
        self.assertGreater(max(shared), 1, "no two requests shared a run")
        for r, x, size in zip(got, xs, sizes):
            self.assertGreaterEqual(size, x.shape[0])
            self.assertLessEqual(size, 8)
            self.assertGreater(r.parameters["npu_queue_ns"].int64_param, 0)
            self.assertGreater(r.parameters["npu_compute_ns"].int64_param, 0)

        after = scrape(self.metrics_port)
        delta = {n: metric(after, n, "mlp") - (metric(before, n, "mlp") or 0)
                 for n in ("nv_inference_request_success", "nv_inference_count", "nv_inference_exec_count",
                           "nv_inference_queue_duration_us", "nv_inference_request_duration_us",
                           "nv_inference_compute_infer_duration_us")}
        self.assertEqual(delta["nv_inference_request_success"], CALLERS)
        self.assertEqual(delta["nv_inference_count"], sum(x.shape[0] for x in xs))  # rows, not requests
        # Executions: one per distinct run the requests reported.
        self.assertEqual(delta["nv_inference_exec_count"], round(sum(1 / s for s in shared)))
        self.assertLess(delta["nv_inference_exec_count"], CALLERS)
        self.assertGreater(delta["nv_inference_queue_duration_us"], 0)
        self.assertGreaterEqual(delta["nv_inference_request_duration_us"], delta["nv_inference_queue_duration_us"])
        self.assertGreater(delta["nv_inference_compute_infer_duration_us"], 0)
        self.assertEqual(metric(after, "nv_inference_pending_request_count", "mlp"), 0)
        # The unbatched model: an execution per request.
        self.assertEqual(metric(after, "nv_inference_exec_count", "alone"),
                         metric(after, "nv_inference_request_success", "alone"))
        for name in ("nv_inference_request_failure", "nv_inference_compute_input_duration_us",
                     "nv_inference_compute_output_duration_us"):
            self.assertIn(f"# TYPE {name} counter", after)
            self.assertIsNotNone(metric(after, name, "mlp"), name)
        self.assertIn("# TYPE nv_inference_pending_request_count gauge", after)

    def test_a_failed_request_counts_as_a_failure_of_its_model(self):
        before = metric(scrape(self.metrics_port), "nv_inference_request_failure", "mlp") or 0
        with self.assertRaises(grpc.RpcError) as e:
            self.k.ModelInfer(infer_request("mlp", np.zeros((9, IN), np.float32)), timeout=60)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("max_batch_size 8", e.exception.details())
        self.assertEqual(metric(scrape(self.metrics_port), "nv_inference_request_failure", "mlp"), before + 1)

    def test_http_and_npu_v1_run_by_model_name_are_batched_too(self):
        x = RNG.standard_normal((2, IN)).astype(np.float32)
        alone = self.k.ModelInfer(infer_request("alone", x), timeout=60).raw_output_contents[0]
        status, headers, body = Http(self.server.http_port).infer("mlp", {"x": x}, binary_inputs=("x",),
                                                                  parameters={"binary_data_output": True})
        self.assertEqual(status, 200, body)
        doc, arrays = decode_infer(headers, body)
        self.assertEqual(arrays["y"].astype(np.float32).tobytes(), alone)
        self.assertEqual(doc["parameters"]["npu_batch_size"], 2)
        self.assertEqual(doc["parameters"]["npu_batch_requests"], 1)
        req = runtime_pb2.RunRequest(model="mlp")
        req.inputs.add(name="x", tensor=tensor_pb2.Tensor(dtype=tensor_pb2.FLOAT32, shape=x.shape, data=x.tobytes()))
        resp = self.runtime.Run(req, timeout=60)
        self.assertEqual(resp.outputs[0].tensor.data, alone)
        self.assertEqual(resp.execution.batch_size, 2)
        self.assertEqual(resp.execution.requests, 1)
        self.assertGreater(resp.execution.queue_ns, 0)


if __name__ == "__main__":
    unittest.main()
