"""A torch module as a callable that runs on npu-server: `npuserve.torch.compile`.

    import torch, npuserve.torch
    net = torchvision.models.resnet18().eval()
    npu_net = npuserve.torch.compile(net, torch.randn(1, 3, 224, 224), target="127.0.0.1:50051")
    y = npu_net(torch.randn(1, 3, 224, 224))        # a torch.Tensor, as net(x) returns
    npu_net.last_result.op_summary()               # the run's per-op profile rows

The module is exported once (torch.onnx.export, opset 17, eval mode) and
registered once (the server imports it; the same content is found again by its
SHA-256); every call is one Run. Outputs come back in the structure the module
returns (a tensor, a tuple, a list or a dict of them) as CPU tensors, without
autograd history: this is inference on the NPU, not a training step.
"""
import os

import torch
from torch.utils import _pytree

from npuserve.client import connect

DEFAULT_TARGET = "127.0.0.1:50051"


class CompiledModule:
    """A registered module; call it with tensors as you would call the module."""

    def __init__(self, client, graph, output_names, output_spec, owns_client, run_options):
        self._client = client
        self.graph = graph
        self._output_names = output_names
        self._output_spec = output_spec
        self._owns_client = owns_client
        self._run_options = run_options
        self.last_result = None

    @property
    def client(self):
        return self._client

    def __call__(self, *args):
        if len(args) != len(self.graph.inputs):
            raise TypeError(f"{len(args)} inputs given; the module was compiled with {len(self.graph.inputs)} "
                            f"({', '.join(v.name for v in self.graph.inputs)})")
        inputs = {v.name: _host(a, v.name) for v, a in zip(self.graph.inputs, args)}
        result = self._client.run(self.graph, inputs, **self._run_options)
        self.last_result = result
        leaves = [torch.from_numpy(result[name]) for name in self._output_names]
        return _pytree.tree_unflatten(leaves, self._output_spec)

    def close(self):
        """Unregisters the module (and closes the connection compile() opened)."""
        try:
            self._client.unregister(self.graph)
        finally:
            if self._owns_client:
                self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def compile(module, example_inputs, *, client=None, target=None, device="npu:0", dynamic=False, profile=False,
            timeout=None, **export_options):
    """`module` (a torch.nn.Module) as a callable that runs on npu-server.

    example_inputs: a tensor or a tuple of tensors, as module(*example_inputs)
        takes them; the export traces with them.
    client: an npuserve.Client; else one is opened to `target` (default
        $NPUSERVE_TARGET, else 127.0.0.1:50051) and closed by close().
    dynamic: True makes dim 0 of every input and output dynamic (a batch of
        any size; the server plans each new shape once). For other dims pass
        torch.onnx.export's dynamic_axes in export_options (with input_names
        and output_names).
    profile: ask every run for its profile (last_result.op_summary()).
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"npuserve.torch.compile takes a torch.nn.Module; got {type(module).__name__}")
    args = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            raise TypeError(f"example input {i} is a {type(a).__name__}; the export traces tensors")
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            example_output = module(*args)
    finally:
        module.train(was_training)
    leaves, spec = _pytree.tree_flatten(example_output)
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, torch.Tensor):
            raise TypeError(f"output {i} of the module is a {type(leaf).__name__}; only tensors are exported")
    input_names = export_options.pop("input_names", None) or [f"x{i}" for i in range(len(args))]
    output_names = export_options.pop("output_names", None) or [f"y{i}" for i in range(len(leaves))]
    if dynamic:
        if "dynamic_axes" in export_options:
            raise TypeError("give dynamic=True or dynamic_axes, not both")
        export_options["dynamic_axes"] = {name: {0: "batch"} for name in [*input_names, *output_names]}
    owns_client = client is None
    if owns_client:
        client = connect(target or os.environ.get("NPUSERVE_TARGET", DEFAULT_TARGET))
    try:
        graph = client.register(module, device, example_inputs=args, input_names=input_names,
                                output_names=output_names, **export_options)
    except BaseException:
        if owns_client:
            client.close()
        raise
    run_options = {"device": device, "profile": profile}
    if timeout is not None:
        run_options["timeout"] = timeout
    return CompiledModule(client, graph, list(output_names), spec, owns_client, run_options)


def _host(value, name):
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"input {name!r} is a {type(value).__name__}; the compiled module takes tensors")
    return value.detach().cpu()
