"""Training on the server's devices: npu.v1 TrainingService (docs/training.md).

    npu = npuserve.connect("127.0.0.1:50051")
    trainer = npu.trainer(model, example_inputs=x[:2], loss="cross_entropy", optimizer="adamw", lr=1e-3,
                          amp="O2", loss_scale="dynamic", devices=["npu:0", "npu:1"])
    for xb, yb in batches:
        s = trainer.step(xb, yb)          # loss, loss_scale, skipped, ... (StepResult)
    print(trainer.evaluate(x_val, y_val).accuracy)
    trainer.save_checkpoint("run.ckpt")   # and trainer.restore_checkpoint("run.ckpt")
    trainer.export("trained.onnx")        # the forward model with the trained weights
    trainer.close()                       # deletes the trainer on the server

The model is anything Client.register takes (an npu.v1.Graph, an ONNX model, a
torch module with example_inputs); its float initializers are the parameters.
The options map onto torch.optim and apex amp: `loss_scale` is a number
(static), "dynamic", "dynamic:INIT", or a dict of DynamicLossScale's fields.
"""
import dataclasses
import os
from typing import List, Optional

import numpy as np

from npuserve import graphs, tensors
from npuserve._stubs import profile_pb2, training_pb2

LOSSES = {"cross_entropy": training_pb2.CROSS_ENTROPY, "mse": training_pb2.MSE}
OPTIMIZERS = {"sgd": training_pb2.OptimizerConfig.SGD, "momentum": training_pb2.OptimizerConfig.MOMENTUM,
              "adam": training_pb2.OptimizerConfig.ADAM, "adamw": training_pb2.OptimizerConfig.ADAMW}
AMP_LEVELS = {"O0": training_pb2.AmpConfig.O0, "O1": training_pb2.AmpConfig.O1, "O2": training_pb2.AmpConfig.O2}


@dataclasses.dataclass(frozen=True)
class StepResult:
    step: int
    loss: float
    loss_scale: float        # the scale this step ran with
    next_loss_scale: float   # the scale the next step runs with
    skipped: bool            # the float status was set: no update
    overflow_elements: int
    profiles: List[profile_pb2.Profile]  # per device, when asked for


@dataclasses.dataclass(frozen=True)
class EvalResult:
    loss: float
    correct: int
    count: int
    accuracy: float
    predictions: Optional[np.ndarray]


def create_request(*, loss, optimizer, lr, momentum=None, nesterov=False, weight_decay=0.0, betas=None, eps=None,
                   amp="O0", loss_scale=None, devices=("npu:0",), backend="hccl", seed=0, trainable=()):
    """The CreateTrainerRequest of Client.trainer's arguments but the model
    (which the client sets inline or by graph_id); ValueError naming a bad one."""
    req = training_pb2.CreateTrainerRequest()
    req.loss = _choice("loss", loss, LOSSES)
    opt = req.optimizer
    opt.kind = _choice("optimizer", optimizer, OPTIMIZERS)
    opt.lr = float(lr)
    if momentum is not None:
        opt.momentum.value = float(momentum)
    opt.nesterov = bool(nesterov)
    opt.weight_decay = float(weight_decay)
    if betas is not None:
        opt.beta1.value, opt.beta2.value = (float(b) for b in betas)
    if eps is not None:
        opt.epsilon.value = float(eps)
    req.amp.opt_level = _choice("amp", amp, AMP_LEVELS)
    _set_loss_scale(req.amp, loss_scale)
    req.devices.extend([devices] if isinstance(devices, str) else devices)
    req.backend = backend
    req.seed = int(seed)
    req.trainable.extend(trainable)
    return req


def _choice(what, value, table):
    if value not in table:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(table)}")
    return table[value]


def _set_loss_scale(amp, scale):
    if scale is None:
        return
    if isinstance(scale, dict):
        amp.dynamic.SetInParent()
        for k, v in scale.items():
            setattr(amp.dynamic, k, v)
    elif isinstance(scale, str) and (scale == "dynamic" or scale.startswith("dynamic:")):
        amp.dynamic.SetInParent()
        if scale != "dynamic":
            try:
                amp.dynamic.init_scale = float(scale[len("dynamic:"):])
            except ValueError:
                raise ValueError(f"loss_scale {scale!r}: dynamic:INIT takes a number") from None
    elif isinstance(scale, (int, float)) and not isinstance(scale, bool):
        amp.static_scale = float(scale)
    else:
        raise ValueError(f"loss_scale {scale!r} is a number, \"dynamic\", \"dynamic:INIT\" or a dict of "
                         "DynamicLossScale's fields")


class Trainer:
    """A trainer on the server (see the module's docstring); made by Client.trainer."""

    def __init__(self, client, response, loss):
        self._client = client
        self.id = response.trainer_id
        self.parameters = list(response.parameters)
        self.input = response.input
        self.output = response.output
        self.devices = list(response.devices)
        self.loss_scale = response.loss_scale
        self.notice = response.notice
        self._label_dtype = tensors.INT64 if loss == "cross_entropy" else tensors.FLOAT32

    def _call_with_batch(self, method, request, x, labels):
        """x and labels inline, or uploaded (and freed after) when too large for one message."""
        return self._client._call_with_batch(method, request, {"x": (x, tensors.FLOAT32),
                                                               "labels": (labels, self._label_dtype)})

    def step(self, x, labels, profile=False) -> StepResult:
        """One training step on the global batch `x` (split over the devices)."""
        req = training_pb2.StepRequest(trainer_id=self.id, profile=profile)
        r = self._call_with_batch("Step", req, x, labels)
        self.loss_scale = r.next_loss_scale
        return StepResult(r.step, r.loss, r.loss_scale, r.next_loss_scale, r.skipped, r.overflow_elements,
                          list(r.profiles))

    def evaluate(self, x, labels, return_predictions=False) -> EvalResult:
        req = training_pb2.EvaluateRequest(trainer_id=self.id, return_predictions=return_predictions)
        r = self._call_with_batch("Evaluate", req, x, labels)
        predictions = tensors.from_tensor(r.predictions) if r.HasField("predictions") else None
        return EvalResult(r.loss, r.correct, r.count, r.accuracy, predictions)

    def export(self, path=None, format="onnx"):
        """The forward model with the trained parameters: ONNX bytes (the model
        a trainer was made from, ONNX or a torch module, or its npu.v1.Graph as
        ONNX) or an npu.v1.Graph (format="graph"); written to `path` when given."""
        formats = {"onnx": training_pb2.ExportRequest.ONNX, "graph": training_pb2.ExportRequest.NPU_GRAPH}
        r = self._client._training_call("Export", training_pb2.ExportRequest(
            trainer_id=self.id, format=_choice("format", format, formats)))
        model = r.onnx_model if format == "onnx" else r.graph
        if path is not None:
            with open(path, "wb") as f:
                f.write(model if format == "onnx" else model.SerializeToString())
        return model

    def save_checkpoint(self, path=None):
        """Everything training changed (parameters, optimizer and loss-scale
        state, step): a TrainerCheckpoint, also written to `path` when given."""
        ckpt = self._client._training_call("SaveCheckpoint", training_pb2.SaveCheckpointRequest(trainer_id=self.id))
        if path is not None:
            with open(path, "wb") as f:
                f.write(ckpt.SerializeToString())
        return ckpt

    def restore_checkpoint(self, checkpoint):
        """Continues from `checkpoint` (a TrainerCheckpoint, its bytes or a path);
        returns its step."""
        if isinstance(checkpoint, (str, os.PathLike)):
            with open(checkpoint, "rb") as f:
                checkpoint = f.read()
        if isinstance(checkpoint, (bytes, bytearray)):
            checkpoint = training_pb2.TrainerCheckpoint.FromString(bytes(checkpoint))
        r = self._client._training_call("RestoreCheckpoint", training_pb2.RestoreCheckpointRequest(
            trainer_id=self.id, checkpoint=checkpoint))
        return r.step

    def close(self):
        """Deletes the trainer on the server."""
        self._client._training_call("DeleteTrainer", training_pb2.DeleteTrainerRequest(trainer_id=self.id))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
