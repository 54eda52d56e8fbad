"""A torch module whose forward and backward run on npu-server, under torch's
autograd: what torch_npu's modules on the NPU are made of.

    remote = npuserve.autograd.RemoteModule(module, client, device="npu:0")
    y = remote(x)                  # tensors with autograd history
    loss_fn(y, target).backward()  # p.grad of every parameter, computed by the server
    optimizer.step()               # torch.optim on the module's own parameters

Per input signature (shapes, dtypes, which inputs need gradients), train or
eval mode and parameter dtypes, the module is exported once (torch.onnx.export,
opset 17, in training mode so that nothing is folded away) and its gradient
graphs are registered (Client.register_gradient: the server builds the
backward with its own autodiff). A forward under autograd runs the forward
graph and keeps the activations the backward reads on the device, as handles;
the backward sends the outputs' gradients, the backward graph reads those
handles (the run frees them) and returns the gradients of the parameters and
of the inputs that need them. Parameters stay on the device as handles and are
uploaded again only when they changed (torch's version counters: an optimizer
step, load_state_dict). BatchNorm's running statistics and its batch counter
are updated on the host from the forward's outputs, as torch updates them;
Dropout's masks come from the server, seeded from torch's generator (so
torch.manual_seed makes a run repeatable, though not with torch's own masks).

The first backward frees the saved activations on the device (so a step
costs no extra call to free them). A second backward through the same forward
(retain_graph=True: two losses on one output, a GAN's discriminator) runs the
forward again first, from the inputs and parameters torch kept for it, with
the first run's dropout seed and without updating the running statistics or
firing hooks twice, as activation checkpointing recomputes; torch's own
checks still apply (no retain_graph, or a tensor changed in place since).
Without autograd (torch.no_grad(), or nothing needs a gradient) a
train-mode forward still updates the running statistics.
"""
import collections
import contextlib
import copy
import io
import threading
import warnings

import torch
from torch.utils import _pytree

from npuserve import graphs, module_scopes
from npuserve.client import Handle
from npuserve.errors import NpuError

_MAX_SIGNATURES = 8  # registrations kept per module; the least recently used is unregistered

# The device's float status as a process sees it: results the backward runs
# overflowed since it was last cleared (fp16 saturated to +-65504 in
# saturation mode, or inf/NaN). apex's overflow check reads it.
_float_status = 0
_status_lock = threading.Lock()


def float_status():
    """Results the backward runs of this process overflowed since clear_float_status()."""
    return _float_status


def clear_float_status():
    global _float_status
    with _status_lock:
        _float_status = 0


def _record_float_status(count):
    global _float_status
    with _status_lock:
        _float_status += int(count)


def _key(tensor):
    return (tensor.data_ptr(), tensor._version, tensor.dtype, tuple(tensor.shape))


class ParameterHandles:
    """A module's parameters on one device as handles, uploaded when they change.

    acquire() counts a use of each handle it returns (a forward whose backward
    is still to come); a handle replaced by a newer upload is freed when its
    last use is released."""

    def __init__(self, client, device):
        self._client = client
        self._device = device
        self._current = {}  # name -> (key, Handle)
        self._uses = collections.Counter()
        self._retired = set()
        self._lock = threading.Lock()
        self.uploads = 0

    def acquire(self, named):
        with self._lock:
            changed = [name for name, tensor in named.items()
                       if name not in self._current or self._current[name][0] != _key(tensor)]
            # All at once: an optimizer step changed every parameter.
            handles = self._client.upload_many([named[n].detach().contiguous() for n in changed], self._device)
            self.uploads += len(changed)
            for name, handle in zip(changed, handles):
                if name in self._current:
                    self._retire(self._current[name][1])
                self._current[name] = (_key(named[name]), handle)
            out = {}
            for name in named:
                out[name] = self._current[name][1]
                self._uses[out[name].id] += 1
            return out

    def release(self, handles):
        with self._lock:
            for handle in handles.values():
                self._uses[handle.id] -= 1
                if self._uses[handle.id] <= 0:
                    del self._uses[handle.id]
                    if handle.id in self._retired:
                        self._retired.discard(handle.id)
                        self._free(handle.id)

    def _retire(self, handle):
        if self._uses.get(handle.id, 0) > 0:
            self._retired.add(handle.id)
        else:
            self._free(handle.id)

    def _free(self, handle_id, wait=False):
        """Frees a handle; on the hot path (a replaced parameter) without waiting for the answer."""
        if not wait:
            self._client.free_later(handle_id)
            return
        try:
            self._client.free(handle_id)
        except NpuError:  # gone already (the server's idle sweep, a restart): nothing to free
            pass

    def close(self):
        with self._lock:
            ids = [h.id for _, h in self._current.values()] + list(self._retired)
            self._current.clear()
            self._retired.clear()
            self._uses.clear()
        for handle_id in ids:
            self._free(handle_id, wait=True)


class _Signature:
    """One export of the module and its registered gradient graphs."""

    def __init__(self, owner, args, needs_grad, hooked):
        module = owner.module
        self.owner = owner
        self.input_names = [f"x{i}" for i in range(len(args))]
        self.opt_level = half_level(module)
        onnx_bytes, output_names, self.output_spec = _export(module, args, self.input_names, self.opt_level)
        self.output_names = output_names
        import onnx

        model = onnx.load_from_string(onnx_bytes)
        initializers = {init.name for init in model.graph.initializer}
        # Hooked submodules: their values come back from a debug run, found by their export scopes.
        self.submodules = module_scopes.submodule_values(model, module, hooked, stacklevel=5) if hooked else []
        named = dict(module.named_parameters())
        self.params = [n for n in named if n in initializers and named[n].dtype.is_floating_point]
        wrt = [n for n in self.params if named[n].requires_grad]
        wrt += [name for name, a, needs in zip(self.input_names, args, needs_grad) if needs]
        self.wrt = wrt
        self.graphs = owner.client.register_gradient(onnx_bytes, owner.device, parameters=self.params, wrt=wrt,
                                                     training=module.training, opt_level=self.opt_level)
        g = self.graphs
        self.forward_dtypes = {v.name: v.dtype for v in g.forward.inputs}
        for name in self.params:
            want, have = self.forward_dtypes.get(name), _dtype_name(named[name])
            if want is not None and want != have:
                self.close()
                raise TypeError(f"npuserve: parameter {name!r} is {have}, but an fp16 model ({self.opt_level}: "
                                f"{_LEVEL_WORDS[self.opt_level]}) runs it in {want}; convert the module with "
                                "module.half() (apex's amp.initialize does) or keep it all fp32")
        backward_inputs = g.backward.inputs if g.backward is not None else []
        self.backward_inputs = [v.name for v in backward_inputs]
        self.backward_dtypes = {v.name: v.dtype for v in backward_inputs}

    def close(self):
        self.graphs.unregister()


class _Pending:
    """What a forward leaves for its backward: the saved handles, the
    parameter handles it used (released once), the inputs and outputs the
    backward reads by name."""

    def __init__(self, owner, signature, params, values):
        self.owner = owner
        self.signature = signature
        self.params = params
        self.values = values  # name -> Handle or tensor, for the backward
        self.done = False

    def finish(self, consumed):
        if self.done:
            return
        self.done = True
        self.owner.handles.release(self.params)
        if not consumed:  # the backward never ran: free what it would have read
            for name in self.signature.graphs.saved:
                handle = self.values.get(name)
                if handle is not None:
                    self.owner.handles._free(handle.id, wait=True)

    def __del__(self):
        try:
            self.finish(consumed=False)
        except Exception:  # at interpreter exit the connection may be gone
            pass


class _RemoteCall(torch.autograd.Function):
    @staticmethod
    def forward(ctx, owner, signature, params, count, *tensors):
        outputs, pending = owner._forward(signature, tensors[:count], params, keep=True)
        ctx.pending = pending
        ctx.count = count
        ctx.save_for_backward(*tensors)  # references only: what a second backward recomputes from
        ctx.mark_non_differentiable(*[o for o in outputs if not o.dtype.is_floating_point])
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        pending = ctx.pending
        if pending.done:  # a retained graph's next backward: the first freed the activations
            tensors = ctx.saved_tensors  # torch refuses here if the graph was not retained or a tensor changed
            sig = pending.signature
            named = dict(zip(sig.params, tensors[ctx.count:]))
            _, pending = pending.owner._forward(sig, tensors[:ctx.count], named, keep=True, again=pending)
            ctx.pending = pending
        grads_by_wrt = pending.owner._backward(pending, grads)
        sig = pending.signature
        inputs = [grads_by_wrt.get(name) for name in sig.input_names]
        params = [grads_by_wrt.get(name) for name in sig.params]
        return (None, None, None, None, *inputs, *params)


class RemoteModule:
    """`module` run on `device` of `client`'s server, its forward and backward
    there (see the module's docstring). Call it as the module; close() to
    unregister its graphs and free its handles."""

    def __init__(self, module, client, device="npu:0", profile=False):
        self.module = module
        self.client = client
        self.device = device
        self.profile = profile  # ask each run for its profile: last_result, last_backward
        self.last_backward = None
        self.handles = ParameterHandles(client, device)
        self._signatures = collections.OrderedDict()
        self._lock = threading.Lock()
        self.last_result = None

    def __call__(self, *args):
        module = self.module
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"input {i} of {type(module).__name__} is a {type(a).__name__}; a module on the NPU "
                                "takes tensors")
        grad = torch.is_grad_enabled()
        params = dict(module.named_parameters())
        needs = tuple(grad and a.requires_grad and a.dtype.is_floating_point for a in args)
        signature = self._signature(args, needs, params, module_scopes.hooked_submodules(module))
        differentiable = grad and (any(needs) or any(params[n].requires_grad for n in signature.params))
        if not differentiable:
            outputs, pending = self._forward(signature, args, params, keep=False)
            pending.finish(consumed=True)
            return _pytree.tree_unflatten(list(outputs), signature.output_spec)
        tensors = [*args, *[params[n] for n in signature.params]]
        outputs = _RemoteCall.apply(self, signature, params, len(args), *tensors)
        return _pytree.tree_unflatten(list(outputs), signature.output_spec)

    def _signature(self, args, needs, params, hooked):
        key = (tuple((tuple(a.shape), a.dtype) for a in args), needs, self.module.training,
               tuple((n, p.dtype, p.requires_grad) for n, p in params.items()), hooked)
        with self._lock:
            signature = self._signatures.get(key)
            if signature is None:
                signature = _Signature(self, args, needs, hooked)
                self._signatures[key] = signature
                while len(self._signatures) > _MAX_SIGNATURES:
                    self._signatures.popitem(last=False)[1].close()
            self._signatures.move_to_end(key)
            return signature

    def _forward(self, signature, args, named, keep, again=None):
        """Runs the forward graph; `again`: the pending of an earlier run of the
        same forward to recompute (its dropout seed; no hooks, no running
        statistics updated twice)."""
        module = self.module
        g = signature.graphs
        params = self.handles.acquire({n: named[n] for n in signature.params})
        # An input the model does not read is not in the export; a float one
        # goes in the dtype the graph takes (fp32 at its edge, whatever amp).
        inputs = {name: _as_dtype(a.detach(), signature.forward_dtypes[name])
                  for name, a in zip(signature.input_names, args) if name in signature.forward_dtypes}
        inputs.update(params)
        buffers = dict(module.named_buffers())
        for name in g.buffers:
            inputs[name] = buffers[name].detach()
        if g.dropout_seed:
            inputs[g.dropout_seed] = (again.values[g.dropout_seed] if again is not None
                                      else torch.randint(0, 2**62, (), dtype=torch.int64))
        try:
            result = self.client.run(g.forward, inputs, device=self.device, keep=g.saved if keep else (),
                                     debug=bool(signature.submodules) and again is None, profile=self.profile)
        except BaseException:
            self.handles.release(params)
            raise
        if again is not None:
            values = dict(inputs)
            values.update(result.outputs)
            return [], _Pending(self, signature, params, values)
        self.last_result = result
        if signature.submodules:
            values = {k: torch.from_numpy(v) for k, v in result.intermediates.items()}
            values.update((k, torch.from_numpy(v)) for k, v in result.outputs.items() if not isinstance(v, Handle))
            values.update((k, v) for k, v in inputs.items() if isinstance(v, torch.Tensor))
            module_scopes.fire_hooks(signature.submodules, values)
        if module.training:
            _update_running_statistics(module, buffers, g, result)
        outputs = [torch.from_numpy(result[name]) for name in signature.output_names]
        values = dict(inputs)
        values.update(result.outputs)
        return outputs, _Pending(self, signature, params, values)

    def _backward(self, pending, grads):
        sig = pending.signature
        g = sig.graphs
        inputs = {}
        given = dict(zip(g.grad_outputs, grads))
        for name in sig.backward_inputs:
            if name in given:  # autograd materializes a gradient no loss reached as zeros
                inputs[name] = _as_dtype(given[name].detach().contiguous(), sig.backward_dtypes[name])
            else:
                inputs[name] = pending.values[name]
        saved = [name for name in g.saved if name in inputs]
        try:
            result = self.client.run(g.backward, inputs, device=self.device, release=saved, profile=self.profile)
        finally:
            pending.finish(consumed=True)
        self.last_backward = result
        _record_float_status(result[g.float_status])
        return {w: torch.from_numpy(result[out]) for w, out in zip(sig.wrt, g.gradients)}

    def close(self):
        with self._lock:
            while self._signatures:
                self._signatures.popitem()[1].close()
        self.handles.close()


def _update_running_statistics(module, buffers, g, result):
    with torch.no_grad():
        for name, out in zip(g.buffers, g.buffer_outputs):
            if out:
                buffers[name].copy_(torch.from_numpy(result[out]))
        for m in module.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.training and m.track_running_stats:
                m.num_batches_tracked.add_(1)


@contextlib.contextmanager
def as_defined(module):
    """The module as its class defines it, for a trace on the host: without
    a forward set on the instance (torch_npu's remote one) and without the
    forward hooks of it and its submodules (no hook sees the trace's values)."""
    own = module.__dict__.pop("forward", None)
    hooks = [(m, m._forward_pre_hooks.copy(), m._forward_hooks.copy()) for m in module.modules()]
    for m, _, _ in hooks:
        m._forward_pre_hooks.clear()
        m._forward_hooks.clear()
    try:
        yield module
    finally:
        for m, pre, post in hooks:
            m._forward_pre_hooks.update(pre)
            m._forward_hooks.update(post)
        if own is not None:
            module.forward = own


_LEVEL_WORDS = {"O2": "fp16 but BatchNorm's parameters", "O3": "every parameter fp16"}


def half_level(module):
    """apex's level of a module whose parameters are fp16 (model.half(), amp O2/O3): O3 when all of them are,
    O2 when some stay fp32 (BatchNorm's, keep_batchnorm_fp32); None for an fp32 module."""
    dtypes = {p.dtype for p in module.parameters() if p.dtype.is_floating_point}
    if torch.float16 not in dtypes:
        return None
    return "O3" if dtypes == {torch.float16} else "O2"


def _dtype_name(tensor):
    """"float32", ... as the graphs' value types name them."""
    return str(tensor.dtype).removeprefix("torch.")


def _as_dtype(tensor, dtype_name):
    if tensor.dtype.is_floating_point and _dtype_name(tensor) != dtype_name:
        return tensor.to(getattr(torch, dtype_name))
    return tensor


def _export(module, args, input_names, opt_level):
    """The module's ONNX bytes in training mode, its output names and their
    structure; the trace leaves the module's buffers and torch's generator as
    they were. An fp16 module is traced as an fp32 copy (torch's CPU kernels
    lack most fp16 ops); the server makes the graph fp16 again (opt_level)."""
    saved = {name: b.detach().clone() for name, b in module.named_buffers()}
    with torch.random.fork_rng(devices=[]), as_defined(module):
        traced = module
        if opt_level is not None:
            traced = copy.deepcopy(module).float()
            args = tuple(a.float() if a.dtype == torch.float16 else a for a in args)
        with torch.no_grad():
            example = traced(*args)
        leaves, spec = _pytree.tree_flatten(example)
        for i, leaf in enumerate(leaves):
            if not isinstance(leaf, torch.Tensor):
                raise TypeError(f"output {i} of {type(module).__name__} is a {type(leaf).__name__}; a module on the "
                                "NPU returns tensors")
        output_names = [f"y{i}" for i in range(len(leaves))]
        buffer = io.BytesIO()
        graphs._register_missing_symbolics(torch, graphs.ONNX_OPSET)
        was_training = traced.training
        try:
            with warnings.catch_warnings():  # the tracer's notes on a training-mode export are for torch's developers
                warnings.simplefilter("ignore")
                torch.onnx.export(traced, tuple(args), buffer, opset_version=graphs.ONNX_OPSET,
                                  input_names=list(input_names), output_names=output_names,
                                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        finally:
            traced.train(was_training)
    with torch.no_grad():
        buffers = dict(module.named_buffers())
        for name, value in saved.items():
            buffers[name].copy_(value)
    return buffer.getvalue(), output_names, spec
