"""apex.amp, as apex defines it, for models on npu-server's NPUs (and on the host).

    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()

The opt levels are apex's:
  O0  fp32 training; static loss scale 1.
  O1  the model stays fp32; apex would patch torch's GEMMs and convolutions
      to fp16, which the NPU's Cube does anyway (fp16 operands, fp32 sums);
      dynamic loss scale.
  O2  an fp16 model (model.half()) whose BatchNorm stays fp32
      (keep_batchnorm_fp32), fp32 master weights in the optimizer (its param
      groups hold fp32 copies; after each step they are copied into the
      model), outputs cast to fp32; dynamic loss scale.
  O3  pure fp16: BatchNorm too, no masters; static loss scale 1.
Keyword overrides (loss_scale=128.0 or "dynamic", keep_batchnorm_fp32,
master_weights, min_loss_scale, max_loss_scale) apply on top, as in apex, and
initialize prints the options it settled on.

A module on the NPU runs its fp16 forward and backward on the server
(npuserve.autograd: the half parameters and the server's amp casts). scale_loss
multiplies the loss by the current scale, clears the device's float status,
and on exit unscales the gradients (into the fp32 masters at O2) and checks
for overflow: a gradient that is inf or NaN, or the float status the
backward's runs set (on the Ascend 910's saturation mode an fp16 overflow
saturates to +-65504 instead of making inf, and only the status tells). With a
dynamic scale an overflow halves the scale and skips the next
optimizer.step(), printing apex's "Gradient overflow.  Skipping step, loss
scaler 0 reducing loss scale to ..."; 2000 clean steps in a row double it.
"""
import contextlib
import types

import torch

from npuserve import autograd as _device

_LEVELS = {
    "O0": {"description": "Pure FP32 training.", "cast_model_type": torch.float32, "patch_torch_functions": False,
           "keep_batchnorm_fp32": None, "master_weights": False, "loss_scale": 1.0},
    "O1": {"description": "Insert automatic casts around Pytorch functions and Tensor methods.",
           "cast_model_type": None, "patch_torch_functions": True, "keep_batchnorm_fp32": None,
           "master_weights": None, "loss_scale": "dynamic"},
    "O2": {"description": "FP16 training with FP32 batchnorm and FP32 master weights.",
           "cast_model_type": torch.float16, "patch_torch_functions": False, "keep_batchnorm_fp32": True,
           "master_weights": True, "loss_scale": "dynamic"},
    "O3": {"description": "Pure FP16 training.", "cast_model_type": torch.float16, "patch_torch_functions": False,
           "keep_batchnorm_fp32": False, "master_weights": False, "loss_scale": 1.0},
}
_OPTIONS = ("enabled", "opt_level", "cast_model_type", "patch_torch_functions", "keep_batchnorm_fp32",
            "master_weights", "loss_scale")


class _LossScaler:
    """apex's LossScaler: a static scale, or a dynamic one (2^16 at first,
    halved on overflow, doubled after `scale_window` clean steps, within
    [min_loss_scale, max_loss_scale])."""

    def __init__(self, loss_scale, min_loss_scale=None, max_loss_scale=2.0 ** 24, scale_window=2000):
        self.dynamic = loss_scale == "dynamic"
        self._loss_scale = min(max_loss_scale, 2.0 ** 16) if self.dynamic else float(loss_scale)
        self._min = min_loss_scale
        self._max = max_loss_scale
        self._window = scale_window
        self._unskipped = 0

    def loss_scale(self):
        return self._loss_scale

    def update_scale(self, overflow):
        """Whether to skip the step; moves the scale as apex does."""
        skip = False
        if overflow and self.dynamic:
            skip = True
            self._loss_scale = self._loss_scale / 2.0
            if self._min:
                self._loss_scale = max(self._min, self._loss_scale)
            self._unskipped = 0
        else:
            self._unskipped += 1
        if self._unskipped == self._window and self.dynamic:
            self._loss_scale = min(self._max, self._loss_scale * 2.0)
            self._unskipped = 0
        return skip


class _State:
    def __init__(self):
        self.initialized = False
        self.enabled = False
        self.options = {}
        self.scalers = []
        self.verbosity = 1


_amp = _State()


def _print(text):
    if _amp.verbosity > 0:
        print(text)


def _to_half(model, keep_batchnorm_fp32):
    model.half()
    if keep_batchnorm_fp32:
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.float()
    if not getattr(model, "_amp_output_caster", False):
        model._amp_output_caster = True
        model.register_forward_hook(lambda module, inputs, output: _to_float(output))


def _to_float(value):
    if isinstance(value, torch.Tensor):
        return value.float() if value.dtype == torch.float16 else value
    if isinstance(value, (list, tuple)):
        return type(value)(_to_float(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_float(v) for k, v in value.items()}
    return value


def _add_masters(optimizer):
    """O2: the optimizer's fp16 parameters replaced by fp32 masters; its step
    copies them back into the model; its zero_grad clears the model's too."""
    pairs = []
    for group in optimizer.param_groups:
        params = []
        for p in group["params"]:
            if p.dtype == torch.float16:
                master = torch.nn.Parameter(p.detach().float(), requires_grad=p.requires_grad)
                pairs.append((p, master))
                params.append(master)
            else:
                params.append(p)
        group["params"] = params
    optimizer._amp_pairs = pairs
    step, zero_grad = optimizer.step, optimizer.zero_grad

    def amp_step(self, closure=None):
        if closure is not None:
            raise RuntimeError("Currently, Amp does not support closure use with optimizers.")
        result = step()
        with torch.no_grad():
            for model_param, master in pairs:
                model_param.copy_(master)
        return result

    def amp_zero_grad(self, set_to_none=False):
        zero_grad(set_to_none=set_to_none)
        for model_param, _ in pairs:
            model_param.grad = None

    optimizer.step = types.MethodType(amp_step, optimizer)
    optimizer.zero_grad = types.MethodType(amp_zero_grad, optimizer)


def initialize(models, optimizers=None, enabled=True, opt_level="O1", cast_model_type=None,
               patch_torch_functions=None, keep_batchnorm_fp32=None, master_weights=None, loss_scale=None,
               cast_model_outputs=None, num_losses=1, verbosity=1, min_loss_scale=None, max_loss_scale=2.0 ** 24):
    """apex.amp.initialize: returns the models and optimizers (as given: one or a list)."""
    _amp.verbosity = verbosity
    if not enabled:
        _amp.enabled = False
        return (models, optimizers) if optimizers is not None else models
    if opt_level not in _LEVELS:
        raise RuntimeError(f"Unexpected optimization level {opt_level}. Options are 'O0', 'O1', 'O2', 'O3'.  Note "
                           "that in `O0`, `O1`, etc., the prefix O is the letter O, not the number zero.")
    level = _LEVELS[opt_level]
    options = {"enabled": True, "opt_level": opt_level}
    options.update({k: level[k] for k in _OPTIONS[2:]})
    _print(f"Selected optimization level {opt_level}:  {level['description']}\n")
    _print("Defaults for this optimization level are:")
    for k in _OPTIONS:
        _print(f"{k:22}: {options[k]}")
    overrides = {"cast_model_type": cast_model_type, "patch_torch_functions": patch_torch_functions,
                 "keep_batchnorm_fp32": keep_batchnorm_fp32, "master_weights": master_weights,
                 "loss_scale": loss_scale}
    _print("Processing user overrides (additional kwargs that are not None)...")
    for k, v in overrides.items():
        if v is None:
            continue
        if k == "loss_scale" and v != "dynamic":
            v = float(v)
        if k == "keep_batchnorm_fp32" and isinstance(v, str):
            v = v == "True"
        options[k] = v
    _print("After processing overrides, optimization options are:")
    for k in _OPTIONS:
        _print(f"{k:22}: {options[k]}")

    model_list = models if isinstance(models, (list, tuple)) else [models]
    for m in model_list:
        if not isinstance(m, torch.nn.Module):
            raise TypeError(f"amp.initialize takes torch.nn.Module models; got {type(m).__name__}")
    optimizer_list = [] if optimizers is None else (
        list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers])
    if options["cast_model_type"] == torch.float16:
        for m in model_list:
            _to_half(m, options["keep_batchnorm_fp32"])
    if options["master_weights"]:
        for opt in optimizer_list:
            _add_masters(opt)
    _amp.options = options
    _amp.scalers = [_LossScaler(options["loss_scale"], min_loss_scale, max_loss_scale) for _ in range(num_losses)]
    _amp.initialized = _amp.enabled = True
    if optimizers is None:
        return models
    return models, optimizers


def _grads(optimizer):
    """(gradient holder, gradient) pairs: O2's masters take the model's fp16 gradients."""
    pairs = getattr(optimizer, "_amp_pairs", None)
    if pairs:
        for model_param, master in pairs:
            if model_param.grad is not None:
                master.grad = model_param.grad.detach().float()
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None:
                yield p


@contextlib.contextmanager
def scale_loss(loss, optimizers, loss_id=0, model=None, delay_unscale=False, delay_overflow_check=False):
    """Yields loss * the current scale; on exit unscales the gradients, checks
    for overflow and, with a dynamic scale, skips the next step on one."""
    if not _amp.enabled:
        yield loss
        return
    if not _amp.initialized:
        raise RuntimeError("amp.scale_loss() before amp.initialize()")
    scaler = _amp.scalers[loss_id]
    optimizer_list = list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]
    _device.clear_float_status()
    yield loss.float() * scaler.loss_scale()
    if delay_unscale:
        return
    inverse = 1.0 / scaler.loss_scale()
    overflow = _device.float_status() > 0
    with torch.no_grad():
        for opt in optimizer_list:
            for p in _grads(opt):
                p.grad.mul_(inverse)
                overflow = overflow or not bool(torch.isfinite(p.grad).all())
    if scaler.update_scale(overflow):
        for opt in optimizer_list:
            _skip_next_step(opt, loss_id, scaler)


def _skip_next_step(optimizer, loss_id, scaler):
    step = optimizer.step

    def skip_step(self, closure=None):
        if closure is not None:
            raise RuntimeError("Currently, Amp does not support closure use with optimizers.")
        _print(f"Gradient overflow.  Skipping step, loss scaler {loss_id} reducing loss scale to "
               f"{scaler.loss_scale()}")
        for _, master in getattr(self, "_amp_pairs", ()):
            master.grad = None
        self.step = step

    optimizer.step = types.MethodType(skip_step, optimizer)


def master_params(optimizer):
    """The parameters the optimizer updates: O2's fp32 masters, else the model's."""
    for group in optimizer.param_groups:
        yield from group["params"]


def state_dict(destination=None):
    out = {} if destination is None else destination
    for i, s in enumerate(_amp.scalers):
        out[f"loss_scaler{i}"] = {"loss_scale": s.loss_scale(), "unskipped": s._unskipped}
    return out


def load_state_dict(state):
    if len(state) != len(_amp.scalers):
        print(f"Warning: state_dict contains {len(state)} entries, while {len(_amp.scalers)} loss_scalers are used")
    for i, s in enumerate(_amp.scalers):
        entry = state.get(f"loss_scaler{i}")
        if entry is not None:
            s._loss_scale = entry["loss_scale"]
            s._unskipped = entry["unskipped"]
