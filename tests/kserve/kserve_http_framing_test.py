"""KServe's HTTP port over raw sockets, as a hostile client or a proxy in
front would write to it (RFC 9112 §6): conflicting Content-Lengths, Content-
Length with chunked, pipelined requests, half-closed connections, header and
URL limits, chunked and gzip bodies past --max_message_bytes, and JSON nested
a hundred thousand deep in every place a request carries JSON. Each answer is
the protocol's {"error": ...}, and the server serves on after each."""
import gzip
import json
import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import kserve_harness as h  # noqa: E402

h.generate_stubs()
from npu.v1 import graph_pb2, runtime_pb2, runtime_pb2_grpc  # noqa: E402
import grpc  # noqa: E402
import numpy as np  # noqa: E402

LIMIT = 1 << 20


class Raw:
    """One TCP connection; responses parsed by Content-Length."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def half_close(self):
        self.sock.shutdown(socket.SHUT_WR)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError
        self.buf += data

    def response(self):
        """(status, headers dict, body) of the next response."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        n = int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, headers, body

    def closed(self):
        try:
            while True:
                self._fill()
        except EOFError:
            return self.buf == b""
        except socket.timeout:
            return False

    def close(self):
        self.sock.close()


def request(path, body=b"", method="POST", extra=""):
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n{extra}\r\n").encode() + body


def infer_body(x):
    return json.dumps({"inputs": [{"name": n, "shape": [2, 3], "datatype": "FP32", "data": x.flatten().tolist()}
                                  for n in ("x", "y")]}).encode()


class KserveHttpFramingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = h.Server(f"--max_message_bytes={LIMIT}")
        channel = grpc.insecure_channel(cls.server.grpc_target)
        h.register(runtime_pb2_grpc.RuntimeServiceStub(channel), runtime_pb2, graph_pb2,
                   h.graph_json("add", [("x", np.float32, (2, 3)), ("y", np.float32, (2, 3))],
                                [h.node("add", "Add", ["x", "y"], ["z"])], ["z"]))
        channel.close()
        cls.x = np.arange(6, dtype=np.float32).reshape(2, 3)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def raw(self):
        c = Raw(self.server.http_port)
        self.addCleanup(c.close)
        return c

    def assertServes(self):
        c = self.raw()
        c.send(request("/v2/models/add/infer", infer_body(self.x)))
        status, _, body = c.response()
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["outputs"][0]["data"], (self.x * 2).flatten().tolist())

    def assertError(self, response, status, fragment):
        got, headers, body = response
        self.assertEqual(got, status, body)
        self.assertEqual(headers.get("content-type"), "application/json")
        self.assertIn(fragment, json.loads(body)["error"])

    def test_conflicting_content_lengths_are_refused_and_close(self):
        c = self.raw()
        body = infer_body(self.x)
        c.send(f"POST /v2/models/add/infer HTTP/1.1\r\nHost: h\r\nContent-Length: {len(body)}\r\n"
               f"Content-Length: {len(body) - 10}\r\n\r\n".encode() + body)
        self.assertError(c.response(), 400, "conflicting Content-Length")
        self.assertTrue(c.closed())
        for bad in ("-1", "1e3", "0x10", "12 34"):
            c = self.raw()
            c.send(f"POST /v2/models/add/infer HTTP/1.1\r\nHost: h\r\nContent-Length: {bad}\r\n\r\n".encode())
            self.assertEqual(c.response()[0], 400, bad)
        self.assertServes()

    def test_content_length_with_chunked_is_read_chunked_and_closes(self):
        c = self.raw()
        body = infer_body(self.x)
        smuggled = b"GET /v2/repository/index HTTP/1.1\r\nHost: h\r\n\r\n"
        c.send(f"POST /v2/models/add/infer HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n"
               f"Transfer-Encoding: chunked\r\n\r\n{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" + smuggled)
        status, headers, _ = c.response()
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("connection"), "close")
        self.assertTrue(c.closed())

    def test_pipelined_requests_are_answered_in_order(self):
        c = self.raw()
        c.send(request("/v2/health/live", method="GET") + request("/v2/models/add/infer", infer_body(self.x)) +
               request("/v2/models/nope", method="GET") + request("/v2/health/ready", method="GET"))
        self.assertEqual(c.response()[0], 200)
        status, _, body = c.response()
        self.assertEqual(status, 200)
        self.assertIn("outputs", json.loads(body))
        self.assertEqual(c.response()[0], 404)
        self.assertEqual(json.loads(c.response()[2]), {"ready": True})

    def test_half_closed_requests_are_answered(self):
        for _ in range(10):
            c = self.raw()
            c.send(request("/v2/models/add/infer", infer_body(self.x)))
            c.half_close()
            status, _, body = c.response()
            self.assertEqual(status, 200, body)
            self.assertTrue(c.closed())

    def test_header_and_url_limits(self):
        c = self.raw()
        c.send(b"GET /v2 HTTP/1.1\r\nHost: h\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(500)) + b"\r\n")
        self.assertError(c.response(), 431, "header and trailer fields")
        c = self.raw()
        c.send(b"GET /v2 HTTP/1.1\r\nHost: h\r\nX-Big: " + b"v" * (1 << 20))  # never ends: refused as it passes
        self.assertError(c.response(), 431, "header section is larger than")
        c = self.raw()
        c.send(b"GET /v2/models/" + b"m" * 20000 + b" HTTP/1.1\r\nHost: h\r\n\r\n")
        self.assertEqual(c.response()[0], 414)
        self.assertServes()

    def test_the_body_limit_holds_for_chunked_and_gzip_bodies(self):
        c = self.raw()
        c.send(b"POST /v2/models/add/infer HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"%x\r\n%s\r\n" % (1 << 16, b" " * (1 << 16))
        for _ in range(16):
            c.send(piece)
        c.send(b"10\r\n")  # past the limit by the chunk size alone
        self.assertError(c.response(), 413, "chunked request body passed the server's limit")
        bomb = gzip.compress(b" " * (64 << 20), compresslevel=9)  # 64 MiB of JSON whitespace in ~64 KiB
        self.assertLess(len(bomb), LIMIT)
        c = self.raw()
        c.send(request("/v2/models/add/infer", bomb, extra="Content-Encoding: gzip\r\n"))
        self.assertError(c.response(), 413, "inflates past the server's limit")
        c = self.raw()  # a gzip body within the limit is inflated and served
        c.send(request("/v2/models/add/infer", gzip.compress(infer_body(self.x)), extra="Content-Encoding: gzip\r\n"))
        self.assertEqual(c.response()[0], 200)
        c = self.raw()
        c.send(request("/v2/models/add/infer", b"x", extra="Content-Encoding: br\r\n"))
        self.assertError(c.response(), 415, "content coding \"br\" is not served")

    def test_deeply_nested_json_anywhere_is_refused(self):
        deep = b"[" * 100000 + b"]" * 100000
        deep_object = b'{"a":' * 100000 + b"1" + b"}" * 100000
        good = b'{"name": "y", "shape": [2, 3], "datatype": "FP32", "data": [1, 2, 3, 4, 5, 6]}'
        bodies = {
            "/v2/models/add/infer": [
                b'{"parameters": {"p": ' + deep + b'}, "inputs": [' + good + b"]}",
                b'{"parameters": ' + deep_object + b', "inputs": [' + good + b"]}",
                b'{"inputs": [{"name": "x", "shape": ' + deep + b', "datatype": "FP32", "data": [1]}, ' + good + b"]}",
                b'{"inputs": [{"name": "x", "shape": [2, 3], "datatype": "FP32", "data": ' + deep + b"}, " + good + b"]}",
                b'{"inputs": [' + good + b'], "outputs": [{"name": "z", "parameters": ' + deep_object + b"}]}",
            ],
            "/v2/repository/index": [b'{"ready": ' + deep + b"}"],
            "/v2/repository/models/add/load": [b'{"parameters": {"config": ' + deep + b"}}",
                                               b'{"parameters": ' + deep_object + b"}"],
        }
        for path, cases in bodies.items():
            for body in cases:
                c = self.raw()
                c.send(request(path, body))
                status, _, answer = c.response()
                self.assertEqual(status, 400, (path, body[:60], answer[:200]))
                self.assertIn("deeper than 32 levels", json.loads(answer)["error"])
                self.assertLess(len(answer), 4200)
        self.assertServes()


if __name__ == "__main__":
    unittest.main()
