"""An independent KServe v2 gRPC client for the dynamic batching acceptance:
stubs generated from protos/kserve/grpc_service.proto (the published
protocol), C callers each sending batch-1 ModelInfer requests back to back
to 127.0.0.1:PORT, bounded in count and time. Prints one line per model:
throughput, mean latency, and the mean executed batch the responses report
(npu_batch_size), and checks that every answer of the batched model is bit
for bit the unbatched model's answer to the same input.
  /usr/bin/python3 scripts/batching_client.py PORT [CALLERS=16] [REQUESTS=1600] [SECONDS=60]
"""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import numpy as np

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
IN = 1024


def stubs():
    out = tempfile.mkdtemp(prefix="kserve_client_")
    protos = os.path.join(SOURCE, "protos")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{protos}", f"--python_out={out}",
                    f"--grpc_python_out={out}", os.path.join(protos, "kserve", "grpc_service.proto"),
                    os.path.join(protos, "triton", "model_config.proto")], check=True)
    for pkg in ("kserve", "triton"):
        open(os.path.join(out, pkg, "__init__.py"), "a").close()
    sys.path.insert(0, out)
    return out


def request(kp, model, x):
    req = kp.ModelInferRequest(model_name=model)
    req.inputs.add(name="x", datatype="FP32", shape=x.shape)
    req.raw_input_contents.append(x.tobytes())
    return req


def load(stub, kp, model, inputs, callers, total, seconds):
    """C callers back to back; returns (requests/s, mean ms, mean executed batch, answers by input index)."""
    lock = threading.Lock()
    state = {"next": 0, "lat": [], "batch": [], "answers": {}, "errors": 0}
    deadline = time.monotonic() + seconds

    def caller():
        while time.monotonic() < deadline:
            with lock:
                i = state["next"]
                if i >= total:
                    return
                state["next"] += 1
            k = i % len(inputs)
            t = time.monotonic()
            try:
                resp = stub.ModelInfer(request(kp, model, inputs[k]), timeout=30)
            except grpc.RpcError:
                with lock:
                    state["errors"] += 1
                continue
            dt = time.monotonic() - t
            with lock:
                state["lat"].append(dt)
                state["batch"].append(resp.parameters["npu_batch_size"].int64_param)
                state["answers"].setdefault(k, resp.raw_output_contents[0])

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    n = len(state["lat"])
    return (n / elapsed, 1000 * sum(state["lat"]) / max(n, 1), sum(state["batch"]) / max(n, 1), state["answers"],
            state["errors"], n)


def main():
    port = int(sys.argv[1])
    callers = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 1600
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    out = stubs()
    try:
        from kserve import grpc_service_pb2 as kp
        from kserve import grpc_service_pb2_grpc as kg
        rng = np.random.default_rng(3)
        inputs = [rng.standard_normal((1, IN)).astype(np.float32) for _ in range(64)]
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = kg.GRPCInferenceServiceStub(channel)
        for model in ("mlp_plain", "mlp_batched"):  # warm up: plans for every batch size
            load(stub, kp, model, inputs, callers, 200, seconds)
        results = {}
        for model in ("mlp_plain", "mlp_batched"):
            results[model] = load(stub, kp, model, inputs, callers, total, seconds)
            rps, ms, batch, _, errors, n = results[model]
            print(f"{model}: {n} requests, {errors} errors, {rps:.1f} req/s, mean {ms:.2f} ms, "
                  f"mean executed batch {batch:.2f}")
        plain, batched = results["mlp_plain"][3], results["mlp_batched"][3]
        same = sum(plain[k] == batched[k] for k in batched if k in plain)
        print(f"bit for bit: {same} of {len(batched)} inputs answered alike")
        print(f"throughput ratio batched/plain: {results['mlp_batched'][0] / results['mlp_plain'][0]:.2f}x")
        channel.close()
        return 0 if same == len(batched) else 1
    finally:
        shutil.rmtree(out, True)


if __name__ == "__main__":
    sys.exit(main())
