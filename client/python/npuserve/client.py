"""A connection to an npu-server: devices, device memory, graphs and runs.

    import numpy as np, npuserve
    npu = npuserve.connect("127.0.0.1:50051")
    mlp = npu.register("examples/graphs/mlp.json")
    result = mlp(x=np.load("examples/graphs/mlp_x.npy"), profile=True)
    result["y"]                      # numpy array
    result.op_summary()              # rows with msprof's op_summary columns
    net = npu.register("resnet18.onnx")                  # or ONNX bytes, an onnx.ModelProto,
    net = npu.register(module, example_inputs=(x,))      # or a torch module (torch.onnx.export)
    net(x)["y0"]

Models and inputs too large for one message are streamed (RegisterGraphStream,
Upload); a model the server already has from this tenant is found by its
SHA-256 and not sent again.

Every failed call raises npuserve.NpuError (code + the server's message). A
Client may be used from several threads at once.
"""
import contextlib
import dataclasses
from typing import Dict, List, Optional

import grpc

from npuserve import graphs, profile as profiles, tensors
from npuserve import training
from npuserve._stubs import (device_pb2, device_pb2_grpc, health_pb2, memory_pb2, memory_pb2_grpc, runtime_pb2,
                             runtime_pb2_grpc, tensor_pb2, training_pb2, training_pb2_grpc)
from npuserve.channel import MAX_SEND_BYTES, make_channel, tls_settings
from npuserve.errors import NpuError, from_rpc_error

UPLOAD_CHUNK_BYTES = 1 << 20
# Headroom below the send limit for a message's fields besides its payload.
MESSAGE_OVERHEAD_BYTES = 64 << 10


@dataclasses.dataclass(frozen=True)
class ValueType:
    """A graph input's or output's name, dtype ("float16", ...) and shape."""
    name: str
    dtype: str
    shape: tuple


@dataclasses.dataclass(frozen=True)
class Handle:
    """A tensor held in a device's memory, owned by the caller's tenant. Pass it
    as a run input; download() or free() it."""
    id: str
    device: str
    dtype: str
    shape: tuple
    bytes: int

    @staticmethod
    def of(message):
        return Handle(message.handle, message.device, tensors.dtype_name(message.type.dtype),
                      tuple(message.type.shape), message.bytes)


class RunResult:
    """Outputs by name (ndarray, or Handle when kept on the device), the debug
    intermediates, and the modeled profile when asked for."""

    def __init__(self, response):
        self.outputs: Dict[str, object] = {o.name: _output(o) for o in response.outputs}
        self.intermediates: Dict[str, object] = {o.name: _output(o) for o in response.intermediates}
        self.profile = response.profile if response.HasField("profile") else None

    def __getitem__(self, name):
        return self.outputs[name]

    def op_summary(self):
        """The profile as rows with msprof's op_summary columns (npuserve.op_summary)."""
        if self.profile is None:
            raise ValueError("the run was not profiled: pass profile=True")
        return profiles.op_summary(self.profile)


class RegisteredGraph:
    """A graph validated and planned once on the server; call it to run it."""

    def __init__(self, client, response, device):
        self._client = client
        self.id = response.graph_id
        self.sha256 = response.content_sha256
        self.device = device
        self.inputs = [_value_type(v) for v in response.inputs]
        self.outputs = [_value_type(v) for v in response.outputs]
        self._input_dtypes = {v.name: v.dtype for v in response.inputs}

    def __call__(self, *args, **kwargs):
        """run(self, inputs, ...): a dict of inputs, or the inputs in the graph's
        order (graph(x) for a one-input module); keyword arguments other than
        run()'s options are inputs by name."""
        options = {k: kwargs.pop(k) for k in list(kwargs) if k in _RUN_OPTIONS}
        if len(args) == 1 and isinstance(args[0], dict):
            inputs = dict(args[0])
        elif len(args) <= len(self.inputs):
            inputs = {v.name: a for v, a in zip(self.inputs, args)}
        else:
            raise TypeError(f"{len(args)} inputs given; the graph takes {len(self.inputs)} "
                            f"({', '.join(v.name for v in self.inputs)})")
        return self._client.run(self, {**inputs, **kwargs}, **options)

    def unregister(self):
        self._client.unregister(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unregister()


class GradientGraphs:
    """A model's forward and backward for a host autograd (register_gradient):
    `forward` and `backward` (RegisteredGraph; no backward without wrt), `saved` (forward outputs to
    keep on the device for the backward), `grad_outputs` (per model output,
    the backward input of its gradient, "" for none), `gradients` (per wrt,
    a backward output), `buffers` / `buffer_outputs` (running statistics and
    their updated values), `dropout_seed` (an INT64 forward input, or "") and
    `float_status` (the backward's overflow count, its last output)."""

    def __init__(self, client, response, device):
        self._client = client
        self.forward = RegisteredGraph(client, response.forward, device)
        self.backward = RegisteredGraph(client, response.backward, device) if response.HasField("backward") else None
        self.saved = list(response.saved)
        self.grad_outputs = list(response.grad_outputs)
        self.gradients = list(response.gradients)
        self.buffers = list(response.buffers)
        self.buffer_outputs = list(response.buffer_outputs)
        self.dropout_seed = response.dropout_seed
        self.float_status = response.float_status

    def unregister(self):
        try:
            self.forward.unregister()
        finally:
            if self.backward is not None:
                self.backward.unregister()


_RUN_OPTIONS = {"device", "profile", "debug", "keep", "keep_all", "timeout", "float_mode", "release"}

# float_mode= of run(): the fp16 conversions' mode (docs/device-model.md, "Float modes").
_FLOAT_MODES = {None: "FLOAT_MODE_PRESET", "saturation": "FLOAT_MODE_SATURATION", "inf_nan": "FLOAT_MODE_INF_NAN"}


class Client:
    """See connect()."""

    def __init__(self, target, tls=None, token=None, timeout=60.0, retry=True, max_send_bytes=MAX_SEND_BYTES):
        self.target = target
        self._tls = tls_settings(tls)
        self._max_send_bytes = max_send_bytes
        self._channel = make_channel(target, self._tls, retry, max_send_bytes)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.timeout = timeout
        self._devices = device_pb2_grpc.DeviceServiceStub(self._channel)
        self._memory = memory_pb2_grpc.MemoryServiceStub(self._channel)
        self._runtime = runtime_pb2_grpc.RuntimeServiceStub(self._channel)
        self._training = training_pb2_grpc.TrainingServiceStub(self._channel)
        self._health = self._channel.unary_unary(
            "/grpc.health.v1.Health/Check", request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- calls -------------------------------------------------------------

    def _call(self, method, request, timeout=None):
        try:
            return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self._tls is not None, self._tls is not None and self._tls.cert) from None

    def health(self, service=""):
        """"SERVING" or "NOT_SERVING" (grpc.health.v1; "" asks about the server as a whole)."""
        response = self._call(self._health, health_pb2.HealthCheckRequest(service=service))
        return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)

    def devices(self) -> List[object]:
        """npu.v1.DeviceInfo of every device: id, preset, ai_cores, clock_mhz, buffers, memory, ..."""
        return list(self._call(self._devices.ListDevices, device_pb2.ListDevicesRequest()).devices)

    def stats(self):
        """npu.v1.ServerStats: runs, failures, uploads, per-device queue and unit utilization."""
        return self._call(self._devices.GetStats, device_pb2.GetStatsRequest())

    def _chunk_bytes(self):
        return max(1, min(UPLOAD_CHUNK_BYTES, self._max_send_bytes - MESSAGE_OVERHEAD_BYTES))

    def upload(self, value, device="npu:0") -> Handle:
        """Puts an ndarray (or torch tensor) in a device's memory; streams 1 MiB chunks."""
        return self.upload_many([value], device)[0]

    def upload_many(self, values, device="npu:0") -> List[Handle]:
        """upload() of each, all in flight at once: one round trip's latency for the lot."""
        futures = [self._memory.Upload.future(self._upload_chunks(v, device), timeout=self.timeout,
                                              metadata=self._metadata) for v in values]
        handles = []
        for f in futures:
            try:
                handles.append(Handle.of(f.result()))
            except grpc.RpcError as e:
                for other in futures:  # the ones that made it are not left behind
                    if other.done() and other.exception() is None:
                        self.free_later(other.result().handle)
                raise from_rpc_error(e, self._tls is not None, self._tls is not None and self._tls.cert) from None
        return handles

    def free_later(self, handle):
        """free() without waiting for the answer (a handle already gone is no error here)."""
        self._memory.Free.future(memory_pb2.FreeRequest(handle=_handle_id(handle)), timeout=self.timeout,
                                 metadata=self._metadata)

    def _upload_chunks(self, value, device):
        t = value if isinstance(value, tensor_pb2.Tensor) else tensors.to_tensor(value)
        chunk_bytes = self._chunk_bytes()
        header = memory_pb2.UploadHeader(device=device, type=tensor_pb2.TensorType(dtype=t.dtype, shape=t.shape))

        def chunks():
            data = memory_pb2.UploadChunk(header=header)
            if not t.data:
                yield data
                return
            for offset in range(0, len(t.data), chunk_bytes):
                data.data = t.data[offset:offset + chunk_bytes]
                yield data
                data = memory_pb2.UploadChunk()

        return chunks()

    def download(self, handle):
        """The ndarray a handle holds."""
        request = memory_pb2.DownloadRequest(handle=_handle_id(handle))
        try:
            stream = self._memory.Download(request, timeout=self.timeout, metadata=self._metadata)
            info, parts = None, []
            for chunk in stream:
                if info is None:
                    if not chunk.HasField("info"):
                        raise ValueError(f"download of \"{request.handle}\": first chunk has no header")
                    info = chunk.info
                parts.append(chunk.data)
        except grpc.RpcError as e:
            raise from_rpc_error(e, self._tls is not None, self._tls is not None and self._tls.cert) from None
        if info is None:
            raise ValueError(f"download of \"{request.handle}\": no data received")
        t = tensor_pb2.Tensor(dtype=info.type.dtype, shape=info.type.shape, data=b"".join(parts))
        return tensors.from_tensor(t)

    def free(self, handle):
        self._call(self._memory.Free, memory_pb2.FreeRequest(handle=_handle_id(handle)))

    def handles(self) -> List[Handle]:
        return [Handle.of(h) for h in self._call(self._memory.List, memory_pb2.ListHandlesRequest()).handles]

    def register(self, model, device="npu:0", *, example_inputs=None, **export_options) -> RegisteredGraph:
        """Registers a model once (validated, imported and planned on the server);
        returns it ready to run by id.

        `model`: an npu.v1.Graph (message, JSON dict, .json path), an ONNX model
        (.onnx path, bytes, onnx.ModelProto), or a torch.nn.Module with
        `example_inputs` (exported with torch.onnx.export, opset 17; `export_options`:
        input_names, output_names, dynamic_axes, opset_version). See npuserve.graphs.
        The same content registered again by this tenant is found by its SHA-256
        and not sent; a model above the send limit is streamed in chunks.
        """
        m = graphs.model_of(model, example_inputs, **export_options)
        try:
            found = self._call(self._runtime.FindGraph, runtime_pb2.FindGraphRequest(content_sha256=m.sha256))
            return RegisteredGraph(self, found, device)
        except NpuError as e:
            if e.code != grpc.StatusCode.NOT_FOUND:
                raise
        if len(m.data) + MESSAGE_OVERHEAD_BYTES <= self._max_send_bytes:
            request = runtime_pb2.RegisterGraphRequest(device=device, content_sha256=m.sha256)
            if m.graph is not None:
                request.graph.CopyFrom(m.graph)
            else:
                request.onnx_model = m.data
            return RegisteredGraph(self, self._call(self._runtime.RegisterGraph, request), device)
        return RegisteredGraph(self, self._call(self._runtime.RegisterGraphStream, self._model_chunks(m, device)),
                               device)

    @contextlib.contextmanager
    def _model_in(self, request, m, device):
        """Puts model `m` in `request`'s model field: inline when it fits one
        message, else by the graph_id of a registration (this tenant's own, or
        streamed now and unregistered once the call is answered)."""
        if len(m.data) + MESSAGE_OVERHEAD_BYTES <= self._max_send_bytes:
            if m.graph is not None:
                request.graph.CopyFrom(m.graph)
            else:
                request.onnx_model = m.data
            yield
            return
        try:
            found = self._call(self._runtime.FindGraph, runtime_pb2.FindGraphRequest(content_sha256=m.sha256))
            request.graph_id = found.graph_id
            yield
            return
        except NpuError as e:
            if e.code != grpc.StatusCode.NOT_FOUND:
                raise
        streamed = RegisteredGraph(self, self._call(self._runtime.RegisterGraphStream, self._model_chunks(m, device)),
                                   device)
        request.graph_id = streamed.id
        try:
            yield
        finally:
            streamed.unregister()

    def _model_chunks(self, m, device):
        header = runtime_pb2.RegisterGraphHeader(format=m.format, device=device, total_bytes=len(m.data),
                                                 content_sha256=m.sha256)
        chunk_bytes = self._chunk_bytes()
        view = memoryview(m.data)
        for offset in range(0, len(m.data), chunk_bytes):
            chunk = runtime_pb2.RegisterGraphChunk(data=bytes(view[offset:offset + chunk_bytes]))
            if offset == 0:
                chunk.header.CopyFrom(header)
            yield chunk

    def unregister(self, graph):
        graph_id = graph.id if isinstance(graph, RegisteredGraph) else graph
        self._call(self._runtime.UnregisterGraph, runtime_pb2.UnregisterGraphRequest(graph_id=graph_id))

    def run(self, graph, inputs=None, *, device=None, profile=False, debug=False, keep=(), keep_all=False,
            timeout=None, float_mode=None, release=()) -> RunResult:
        """Runs a registered graph, or any model register() takes.

        An npu.v1.Graph that fits a message is sent inline (planned for this run
        only); any other model is registered first (once per content, like
        `npu run MODEL.onnx`: the registration stays and is found again by hash).
        `inputs`: name -> ndarray, torch tensor, Python scalar or list (converted
        to the input's declared dtype), or Handle. Inputs that make the request
        too large for one message are uploaded first and freed after the run.
        `keep`: outputs to leave on the device as handles; `profile`: return the
        modeled profile; `float_mode`: "saturation" or "inf_nan" forces the fp16
        conversions' mode (None: the device preset's); `release`: inputs given
        as handles that the server frees once it has answered the run.
        """
        if float_mode not in _FLOAT_MODES:
            raise ValueError(f"float_mode {float_mode!r} is not one of 'saturation', 'inf_nan' or None (the preset's)")
        request = runtime_pb2.RunRequest()
        message = graphs.graph_message(graph) if graphs.is_graph(graph) else None
        if message is not None and message.ByteSize() + MESSAGE_OVERHEAD_BYTES > self._max_send_bytes:
            message = None
        if message is None and not isinstance(graph, RegisteredGraph):
            graph = self.register(graph, device or "npu:0")
        if isinstance(graph, RegisteredGraph):
            request.graph_id = graph.id
            declared = graph._input_dtypes
            device = device or graph.device
        else:
            request.graph.CopyFrom(message)
            declared = {v.name: v.dtype for v in message.inputs}
        release = set(release)
        for name, value in (inputs or {}).items():
            entry = request.inputs.add(name=name)
            if isinstance(value, Handle):
                entry.handle = value.id
                entry.release = name in release
                continue
            dtype = declared.get(name) or None
            try:
                entry.tensor.CopyFrom(tensors.to_tensor(value, dtype))
            except ValueError as e:
                raise ValueError(f"input \"{name}\": {e}") from None
        request.options.device = device or "npu:0"
        request.options.profile = profile
        request.options.debug = debug
        request.options.keep_on_device.extend(keep)
        request.options.keep_all_on_device = keep_all
        request.options.float_mode = tensor_pb2.FloatMode.Value(_FLOAT_MODES[float_mode])
        with self._freed_after() as uploaded:
            self._upload_until_it_fits(request, request.inputs, uploaded, request.options.device)
            return RunResult(self._call(self._runtime.Run, request, timeout))

    def register_gradient(self, model, device="npu:0", *, parameters=(), wrt, training=True,
                          opt_level=None) -> "GradientGraphs":
        """Registers `model`'s gradient graphs (RuntimeService.RegisterGradient):
        a forward that also returns what its backward reads, and a backward from
        the outputs' gradients to those of `wrt` (float inputs and
        `parameters`, the float initializers that become inputs). `model`: an
        npu.v1.Graph or ONNX model as register() takes them; opt_level: apex's
        "O1", "O2" or "O3" (None: "O0"). npuserve.autograd runs them under
        torch's autograd."""
        m = graphs.model_of(model)
        request = runtime_pb2.RegisterGradientRequest(device=device, parameters=list(parameters), wrt=list(wrt),
                                                      training=training)
        if opt_level is not None:
            request.opt_level = training_pb2.AmpConfig.OptLevel.Value(opt_level)
        with self._model_in(request, m, device):
            return GradientGraphs(self, self._call(self._runtime.RegisterGradient, request), device)

    def trainer(self, model, *, loss, optimizer, lr, example_inputs=None, **options) -> training.Trainer:
        """A trainer on the server for `model` (anything register() takes; its
        float initializers are the parameters). loss: "cross_entropy" (INT64
        labels) or "mse"; optimizer: "sgd", "momentum", "adam", "adamw" with lr,
        momentum, nesterov, weight_decay, betas, eps as torch.optim names them;
        amp: "O0", "O1", "O2" and loss_scale (a number, "dynamic",
        "dynamic:INIT"); devices (one process per device in DDP terms: the batch
        is split over them), backend ("hccl"), seed, trainable (parameter names).
        See npuserve.training."""
        export = {k: options.pop(k) for k in list(options) if k in graphs.EXPORT_OPTIONS}
        request = training.create_request(loss=loss, optimizer=optimizer, lr=lr, **options)
        m = graphs.model_of(model, example_inputs, **export)
        device = request.devices[0] if request.devices else "npu:0"
        with self._model_in(request, m, device):
            return training.Trainer(self, self._training_call("CreateTrainer", request), loss)

    def _training_call(self, method, request):
        return self._call(getattr(self._training, method), request)

    def _call_with_batch(self, method, request, batch):
        """Fills request's BatchTensor fields from `batch` (name -> (value,
        DataType)): inline, Handle, or uploaded first (and freed after) when the
        request would not fit one message."""
        for name, (value, dtype) in batch.items():
            field = getattr(request, name)
            if isinstance(value, Handle):
                field.handle = value.id
                continue
            try:
                field.tensor.CopyFrom(tensors.to_tensor(value, dtype))
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
        with self._freed_after() as uploaded:
            self._upload_until_it_fits(request, [getattr(request, name) for name in batch], uploaded)
            return self._training_call(method, request)

    @contextlib.contextmanager
    def _freed_after(self):
        """A list for the handles a call uploads, freed when the call is done."""
        uploaded = []
        try:
            yield uploaded
        finally:
            for handle in uploaded:  # best effort: the call's result stands
                try:
                    self.free(handle)
                except NpuError:
                    pass

    def _upload_until_it_fits(self, request, entries, uploaded, device="npu:0"):
        """Feeds the largest inline tensors of `entries` (messages with a tensor
        or handle field) by handle until the request fits one message."""
        inline = sorted((e for e in entries if e.HasField("tensor")), key=lambda e: len(e.tensor.data), reverse=True)
        for entry in inline:
            if request.ByteSize() + MESSAGE_OVERHEAD_BYTES <= self._max_send_bytes:
                return
            handle = self.upload(entry.tensor, device)
            uploaded.append(handle.id)
            entry.handle = handle.id


def connect(target="127.0.0.1:50051", tls=None, token=None, timeout=60.0, retry=True,
            max_send_bytes=MAX_SEND_BYTES) -> Client:
    """A Client for `target` (HOST:PORT, ipv4:A,B or dns:///NAME:PORT).

    tls: False/None plaintext; True TLS with the system roots; "ca.pem" TLS with
    that CA; npuserve.TLS(ca=, cert=, key=) for mutual TLS. token: a bearer
    token (the server's --auth_tokens). timeout: seconds per call. Connecting
    happens on the first call. max_send_bytes: the largest message sent;
    models and inputs above it are streamed.
    """
    return Client(target, tls=tls, token=token, timeout=timeout, retry=retry, max_send_bytes=max_send_bytes)


def _output(o):
    return tensors.from_tensor(o.tensor) if o.HasField("tensor") else Handle.of(o.handle)


def _value_type(v):
    return ValueType(v.name, tensors.dtype_name(v.dtype), tuple(v.shape))


def _handle_id(handle):
    return handle.id if isinstance(handle, Handle) else handle
