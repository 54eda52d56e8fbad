"""What the KServe interop tests share: a real npu-server on loopback ports,
Python stubs generated at test time from the protocol's .proto (and from
npu.v1's, to register graphs), and small graphs with known answers.

The KServe client side is written from the published protocol only: the
stubs come from protos/kserve/grpc_service.proto by grpc_tools.protoc, and
HTTP/REST is plain http.client. Nothing here imports the server's code.
"""
import atexit
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

SOURCE = os.environ.get("NPU_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SERVER = os.environ.get("NPU_SERVER_BIN", os.path.join(SOURCE, "build", "server", "rpc", "npu-server"))


def generate_stubs():
    """grpc_tools.protoc into a fresh folder on sys.path, removed at exit; returns the folder."""
    out = tempfile.mkdtemp(prefix="kserve_stubs_")
    atexit.register(shutil.rmtree, out, True)
    protos = os.path.join(SOURCE, "protos")
    files = [os.path.join(protos, "kserve", "grpc_service.proto"), os.path.join(protos, "triton", "model_config.proto")]
    files += [os.path.join(protos, "npu", "v1", f) for f in sorted(os.listdir(os.path.join(protos, "npu", "v1")))]
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{protos}", f"--python_out={out}",
                    f"--grpc_python_out={out}"] + files, check=True)
    for pkg in ("kserve", "triton", "npu", os.path.join("npu", "v1")):
        open(os.path.join(out, pkg, "__init__.py"), "a").close()
    sys.path.insert(0, out)
    return out


class Server:
    """npu-server on ephemeral loopback ports (gRPC and KServe HTTP), stopped by stop()."""

    def __init__(self, *flags):
        self.log = tempfile.NamedTemporaryFile(prefix="npu-server-kserve-", suffix=".log", delete=False)
        args = [SERVER, "--listen=127.0.0.1:0", "--http-listen=127.0.0.1:0", "--threads=1", "--log_level=off"]
        self.proc = subprocess.Popen(args + list(flags), stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.log.close()  # the server writes it; the test reads it by name
        line = self.proc.stdout.readline()
        m = re.search(r"127\.0\.0\.1:(\d+)", line)
        if not m:
            self.stop()
            raise RuntimeError(f"npu-server did not start: {line!r}; log {self.log.name}: {self.log_text()}")
        self.grpc_port = int(m.group(1))
        self.http_port = self._wait_for(r"KServe v2 HTTP/REST on https?://127\.0\.0\.1:(\d+)/v2")

    def _wait_for(self, pattern):
        for _ in range(500):
            m = re.search(pattern, self.log_text())
            if m:
                return int(m.group(1))
            time.sleep(0.01)
        raise RuntimeError(f"npu-server never logged {pattern}: {self.log_text()}")

    def log_text(self):
        with open(self.log.name) as f:
            return f.read()

    @property
    def grpc_target(self):
        return f"127.0.0.1:{self.grpc_port}"

    def stop(self):
        """SIGTERM; raises unless the server drained and exited 0 without a sanitizer report."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        self.proc.stdout.close()
        log = self.log_text()
        os.unlink(self.log.name)
        if self.proc.returncode != 0 or "Sanitizer" in log or "runtime error:" in log:
            raise RuntimeError(f"npu-server exited {self.proc.returncode}: {log}")


@contextlib.contextmanager
def server_with_tokens(lines):
    """A Server with --auth_tokens: `lines` of "TOKEN TENANT"."""
    with tempfile.NamedTemporaryFile("w", prefix="npu_tokens_", delete=False) as f:
        f.write(lines)
    try:
        server = Server(f"--auth_tokens={f.name}")
        try:
            yield server
        finally:
            server.stop()
    finally:
        os.unlink(f.name)


# npu.v1 dtype names by numpy type, and the KServe datatype of each.
NPU_DTYPE = {np.float16: "FLOAT16", np.float32: "FLOAT32", np.int32: "INT32", np.int8: "INT8", np.bool_: "BOOL",
             np.int64: "INT64"}
KSERVE_DTYPE = {np.float16: "FP16", np.float32: "FP32", np.int32: "INT32", np.int8: "INT8", np.bool_: "BOOL",
                np.int64: "INT64"}


def graph_json(name, inputs, nodes, outputs, initializers=()):
    """An npu.v1.Graph in protobuf's JSON mapping. inputs: [(name, numpy type, shape)]."""
    return json.dumps({
        "name": name,
        "inputs": [{"name": n, "dtype": NPU_DTYPE[t], "shape": list(s)} for n, t, s in inputs],
        "initializers": list(initializers),
        "nodes": nodes,
        "outputs": list(outputs),
    })


def node(name, op, inputs, outputs, **attributes):
    attrs = {}
    for k, v in attributes.items():
        attrs[k] = {"ints": {"values": list(v)}} if isinstance(v, (list, tuple)) else {"i": v}
    return {"name": name, "opType": op, "inputs": list(inputs), "outputs": list(outputs), "attributes": attrs}


# One input per datatype, each transposed: a pure data movement, so the
# reference (numpy's transpose) is exact for every type.
TRANSPOSE_TYPES = [np.float32, np.int32, np.int8, np.int64, np.bool_]


def transpose_graph(name, types, shape=(2, 3)):
    inputs = [(f"in_{KSERVE_DTYPE[t].lower()}", t, shape) for t in types]
    nodes = [node(f"t_{i}", "Transpose", [n], [f"out{n[2:]}"], perm=[1, 0]) for i, (n, _, _) in enumerate(inputs)]
    return graph_json(name, inputs, nodes, [f"out{n[2:]}" for n, _, _ in inputs])


def sample(t, shape, rng):
    """Values of numpy type `t` that use its range (negative, large, fractional)."""
    if t == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if t in (np.float16, np.float32):
        return rng.standard_normal(shape).astype(t) * t(3)
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, shape, dtype=t, endpoint=True)


def register(stubs_runtime, runtime_pb2, graph_pb2, text, token=None):
    """Registers a graph (JSON) through npu.v1; returns its id."""
    from google.protobuf import json_format
    graph = json_format.Parse(text, graph_pb2.Graph())
    metadata = [("authorization", f"Bearer {token}")] if token else None
    return stubs_runtime.RegisterGraph(runtime_pb2.RegisterGraphRequest(graph=graph), metadata=metadata).graph_id


def mlp_json():
    with open(os.path.join(SOURCE, "examples", "graphs", "mlp.json")) as f:
        return f.read()


def mlp_reference(x):
    """examples/graphs/mlp.json in float64 from its fp16 weights: relu(x w1 + b1) w2 + b2."""
    with open(os.path.join(SOURCE, "examples", "graphs", "mlp.json")) as f:
        g = json.load(f)
    w = {i["name"]: np.frombuffer(base64.b64decode(i["tensor"]["data"]), np.float16).reshape(i["tensor"]["shape"])
         for i in g["initializers"]}
    x = x.astype(np.float64)
    h = np.maximum(x @ w["w1"].astype(np.float64) + w["b1"].astype(np.float64), 0)
    return h @ w["w2"].astype(np.float64) + w["b2"].astype(np.float64)
