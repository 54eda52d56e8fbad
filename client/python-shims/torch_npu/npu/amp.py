"""torch.npu.amp: autocast and GradScaler with torch.cuda.amp's API.

autocast: on the NPU the Cube multiplies fp16 operands with fp32 accumulation
whatever the graph's dtype (the chip's allow_fp32_to_fp16 behaviour), so a
module on the NPU computes its matmuls and convolutions in fp16 with or without
autocast; the context only records that it is on (is_autocast_enabled()).

GradScaler: torch.cuda.amp.GradScaler's arithmetic on the host, over the
parameters' gradients: scale(loss) multiplies by the scale; step(optimizer)
unscales the gradients, skips the step when any is inf or NaN (the float
status a real NPU reads) and prints nothing; update() halves the scale after a
skipped step and doubles it after growth_interval clean steps.
"""
import contextlib
import math

import torch

_enabled = []


@contextlib.contextmanager
def autocast(enabled=True, dtype=torch.float16, cache_enabled=True):
    _enabled.append(bool(enabled))
    try:
        yield
    finally:
        _enabled.pop()


def is_autocast_enabled():
    return bool(_enabled and _enabled[-1])


class GradScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor {growth_factor} must be > 1")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor {backoff_factor} must be in (0, 1)")
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._found_inf = None      # per step: None until unscale_
        self._unscaled = set()      # optimizers unscaled this step

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        if not self._enabled:
            return outputs
        if isinstance(outputs, torch.Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise TypeError(f"GradScaler.scale takes tensors; got {type(outputs).__name__}")

    def unscale_(self, optimizer):
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update()")
        inv = 1.0 / self._scale
        found = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inv)
                    if not torch.isfinite(p.grad).all():
                        found = True
        self._found_inf = bool(self._found_inf) or found
        self._unscaled.add(id(optimizer))

    def step(self, optimizer, *args, **kwargs):
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
            self._growth_tracker = 0
        elif self._found_inf:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._found_inf is None:
            raise RuntimeError("GradScaler.update(): no inf checks were recorded: call step() (or unscale_()) first")
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                grown = self._scale * self._growth_factor
                if math.isfinite(grown):
                    self._scale = grown
                self._growth_tracker = 0
        self._found_inf = None
        self._unscaled.clear()

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state):
        if not state:
            return
        self._scale = float(state["scale"])
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])
