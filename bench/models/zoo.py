#!/usr/bin/python3
"""Issue 12's acceptance models through the server, against torch: the
torchvision zoo (every classification model of at most 100 M parameters and
every segmentation model) and the stock transformer/RNN layers, each exported
with torch.onnx.export (opset 17, random weights, eval mode) and registered
with npu-server through the Python client (npuserve.register), which the
server imports. Not part of CI: a full pass takes hours on a small machine.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/models/zoo.py \
           --server build/server/rpc/npu-server [--only NAME,...] [--skip NAME,...] \
           [--groups vision,segmentation,layers] [--timeout 900] [--out zoo.md]

For each model it writes one row: parameters, the stage reached (export,
register, run, compare), the max abs error against torch fp32, the same for an
fp16-operand torch reference (Conv/Linear/MatMul operands rounded to fp16,
fp32 accumulation: the Cube's numerics contract), the server's host time of
one run and torch eager's, and, for a model that fails, why (the unsupported
ops the server names, all at once). A model passes when its error against
torch fp32 is at most twice the fp16-operand reference's plus 1e-5 of the
output's scale: no further from torch than fp16 operands alone take it.
"""
import argparse
import contextlib
import io
import re
import signal
import subprocess
import sys
import time
import traceback

import numpy as np
import torch
import torchvision

import npuserve

MAX_PARAMS = 100_000_000


class Server:
    def __init__(self, path, threads):
        self.process = subprocess.Popen([path, "--listen=127.0.0.1:0", f"--threads={threads}"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if not match:
            self.process.kill()
            raise RuntimeError(f"npu-server did not start: {line}")
        self.target = f"127.0.0.1:{match.group(1)}"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.communicate(timeout=60)


# --- the models --------------------------------------------------------------

def randomise_batchnorm(model):
    """Non-trivial BatchNorm scales and shifts, as a trained model has (the
    running statistics come from calibrate_batchnorm)."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    return model


def calibrate_batchnorm(model, make_inputs):
    """Running statistics measured on the model's own activations (a cumulative
    average over two random batches), as training leaves them: each BatchNorm
    then normalises what reaches it. With torchvision's initial statistics (mean
    0, variance 1) the activations of deep residual nets grow block by block
    (resnet101 reaches 3.5e5, resnet152 8.7e8 with random weights), past fp16's
    65504, which no trained model's do."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model
    saved = [(m, m.momentum) for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(2):
            inputs = make_inputs()
            model(*(torch.cat([t, torch.randn_like(t)]) for t in inputs))  # a batch of 2: BatchNorm1d needs it
    for m, momentum in saved:
        m.momentum = momentum
    return model.eval()


def vision_models():
    for name in sorted(torchvision.models.list_models(module=torchvision.models)):
        size = 299 if name == "inception_v3" else 224
        extra = {"aux_logits": False, "init_weights": False} if name in ("inception_v3", "googlenet") else {}
        yield name, "vision", (lambda n=name, e=extra: torchvision.models.get_model(n, weights=None, **e)), \
            (lambda s=size: (torch.randn(1, 3, s, s),)), None


def segmentation_models():
    for name in sorted(torchvision.models.list_models(module=torchvision.models.segmentation)):
        yield name, "segmentation", (lambda n=name: SegmentationOut(torchvision.models.get_model(
            n, weights=None, weights_backbone=None, aux_loss=False))), (lambda: (torch.randn(1, 3, 224, 224),)), None


class SegmentationOut(torch.nn.Module):
    """The segmentation models return a dict; export its "out"."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class DecoderWithCausalMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerDecoderLayer(64, 4, 128, batch_first=True)

    def forward(self, tgt, memory):
        n = tgt.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return self.layer(tgt, memory, tgt_mask=mask)


class SelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(64, 4, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class FirstOutput(torch.nn.Module):
    """An RNN's output sequence (its final states are the same numbers again)."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


class SmallUNet(torch.nn.Module):
    """Two levels down, ConvTranspose up, skip connections concatenated."""

    def __init__(self):
        super().__init__()

        def block(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.BatchNorm2d(o), torch.nn.ReLU(),
                                       torch.nn.Conv2d(o, o, 3, padding=1), torch.nn.ReLU())

        self.down1, self.down2, self.bottom = block(3, 16), block(16, 32), block(32, 64)
        self.pool = torch.nn.MaxPool2d(2)
        self.up2, self.dec2 = torch.nn.ConvTranspose2d(64, 32, 2, stride=2), block(64, 32)
        self.up1, self.dec1 = torch.nn.ConvTranspose2d(32, 16, 2, stride=2), block(32, 16)
        self.head = torch.nn.Conv2d(16, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        b = self.bottom(self.pool(d2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], 1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], 1))
        return self.head(u1)


def layer_models():
    seq = {0: "batch", 1: "sequence"}
    layers = [
        ("transformer_encoder_layer", lambda: torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True),
         lambda: (torch.randn(2, 10, 64),), {"x0": seq, "y0": seq}),
        ("transformer_decoder_layer_causal", DecoderWithCausalMask,
         lambda: (torch.randn(2, 10, 64), torch.randn(2, 12, 64)), {"x0": seq, "x1": seq, "y0": seq}),
        ("multihead_attention", SelfAttention, lambda: (torch.randn(2, 10, 64),), {"x0": seq, "y0": seq}),
        ("lstm_bidirectional_2_layers",
         lambda: FirstOutput(torch.nn.LSTM(16, 32, num_layers=2, bidirectional=True, batch_first=True)),
         lambda: (torch.randn(2, 10, 16),), {"x0": seq, "y0": seq}),
        ("gru_bidirectional_2_layers",
         lambda: FirstOutput(torch.nn.GRU(16, 32, num_layers=2, bidirectional=True, batch_first=True)),
         lambda: (torch.randn(2, 10, 16),), {"x0": seq, "y0": seq}),
        ("small_unet", lambda: randomise_batchnorm(SmallUNet()), lambda: (torch.randn(1, 3, 64, 64),),
         {"x0": {0: "batch", 2: "height", 3: "width"}, "y0": {0: "batch", 2: "height", 3: "width"}}),
    ]
    for name, build, inputs, axes in layers:
        yield name, "layers", build, inputs, None
        yield name + "+dynamic_axes", "layers", build, inputs, axes


# --- the fp16-operand reference ------------------------------------------------

class Fp16Operands:
    """Rounds the operands of the Cube's ops (conv, linear, matmul) to fp16 and
    back while active, so torch computes with the device's operands and fp32
    accumulation. The functions are replaced where torch's modules look them
    up at call time (a TorchFunctionMode would not see calls nested in another
    function, such as multi_head_attention_forward's)."""

    PLACES = [(torch.nn.functional, n) for n in ("conv1d", "conv2d", "conv_transpose2d", "linear")] + \
             [(torch, n) for n in ("matmul", "bmm", "baddbmm", "addmm")]

    def __enter__(self):
        self.saved = [(m, n, getattr(m, n)) for m, n in self.PLACES]
        for m, n, f in self.saved:
            setattr(m, n, lambda *a, _f=f, **k: _f(*(_fp16(x) for x in a), **{kk: _fp16(v) for kk, v in k.items()}))
        # nn.LSTM/nn.GRU run in one fused kernel (torch._VF) that the functions
        # above never see: their recurrences are written out with linear().
        self.saved += [(c, "forward", c.forward) for c in (torch.nn.LSTM, torch.nn.GRU)]
        torch.nn.LSTM.forward = lambda rnn, x: (_rnn_reference(rnn, x, _lstm_cell), None)
        torch.nn.GRU.forward = lambda rnn, x: (_rnn_reference(rnn, x, _gru_cell), None)
        return self

    def __exit__(self, *exc):
        for m, n, f in self.saved:
            setattr(m, n, f)


def _lstm_cell(x, state, w_ih, w_hh, b_ih, b_hh):
    h, c = state if state is not None else (torch.zeros(x.shape[0], w_hh.shape[1]),) * 2
    i, f, g, o = (torch.nn.functional.linear(x, w_ih, b_ih) + torch.nn.functional.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
    return h, (h, c)


def _gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    h = h if h is not None else torch.zeros(x.shape[0], w_hh.shape[1])
    xr, xz, xn = torch.nn.functional.linear(x, w_ih, b_ih).chunk(3, 1)
    hr, hz, hn = torch.nn.functional.linear(h, w_hh, b_hh).chunk(3, 1)
    r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
    n = torch.tanh(xn + r * hn)  # linear_before_reset, as torch's GRU and its ONNX export
    h = (1 - z) * n + z * h
    return h, h


def _rnn_reference(rnn, x, cell):
    """rnn's output sequence (batch_first, zero initial states) step by step."""
    layer_input = x if rnn.batch_first else x.transpose(0, 1)
    for layer in range(rnn.num_layers):
        outputs = []
        for direction in range(2 if rnn.bidirectional else 1):
            suffix = f"_l{layer}" + ("_reverse" if direction else "")
            weights = [getattr(rnn, f"{n}{suffix}") for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            steps = range(layer_input.shape[1])
            state, sequence = None, []
            for t in (reversed(steps) if direction else steps):
                h, state = cell(layer_input[:, t], state, *weights)
                sequence.append(h)
            outputs.append(torch.stack(sequence[::-1] if direction else sequence, 1))
        layer_input = torch.cat(outputs, 2)
    return layer_input if rnn.batch_first else layer_input.transpose(0, 1)


def _fp16(value):
    if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
        return value.half().float()
    return value


# --- one model ---------------------------------------------------------------

def new_row(name):
    return {"model": name, "params": None, "stage": "build", "err": None, "err16": None, "server_s": None,
            "torch_s": None, "result": "fail", "why": ""}


def check(npu, row, build, make_inputs, dynamic_axes, timeout):
    """Fills `row` as far as the model gets (an exception leaves its stage)."""
    torch.manual_seed(0)
    model = calibrate_batchnorm(build(), make_inputs).eval()
    row["params"] = sum(p.numel() for p in model.parameters())
    if row["params"] > MAX_PARAMS:
        row.update(result="skipped", why=f"more than {MAX_PARAMS // 1_000_000} M parameters")
        return
    inputs = make_inputs()
    # Gradients on, as the export runs: under no_grad, eval-mode attention takes
    # torch's fused fast path, which Fp16Operands cannot see into.
    start = time.perf_counter()
    expected = model(*inputs).detach()
    row["torch_s"] = time.perf_counter() - start
    with Fp16Operands():
        expected16 = model(*inputs).detach()
    row["stage"] = "export"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        onnx_bytes = npuserve.graphs.export_torch(model, inputs, dynamic_axes=dynamic_axes)
    row["stage"] = "register"
    reg = npu.register(onnx_bytes)
    row["stage"] = "run"
    feed = {f"x{i}": t for i, t in enumerate(inputs)}
    start = time.perf_counter()
    got = npu.run(reg, feed, timeout=timeout)["y0"]
    row["server_s"] = time.perf_counter() - start
    reg.unregister()
    row["stage"] = "compare"
    ref, ref16 = expected.double().numpy(), expected16.double().numpy()
    if got.shape != ref.shape:
        row["why"] = f"output shape {got.shape}, torch's {ref.shape}"
        return
    row["err"] = float(np.max(np.abs(got - ref))) if ref.size else 0.0
    row["err16"] = float(np.max(np.abs(ref16 - ref))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    bound = 2 * row["err16"] + 1e-5 * scale
    row["result"] = "pass" if np.isfinite(row["err"]) and row["err"] <= bound else "fail"
    if not np.isfinite(row["err16"]):
        row["why"] = "the fp16-operand reference overflows fp16 (activations past 65504)"
    elif row["result"] == "fail":
        row["why"] = f"error {row['err']:.3g} > bound {bound:.3g}"


def why_failed(error):
    text = str(error)
    ops = re.findall(r'op type "([^"]+)" is not supported', text)
    if ops:
        return "unsupported: " + ", ".join(sorted(set(ops)))
    return text.splitlines()[0][:300] if text else type(error).__name__


def table(rows):
    out = ["| model | params (M) | result | stage | max abs err | fp16-operand torch err | server s | torch s | why |",
           "|---|---:|---|---|---:|---:|---:|---:|---|"]

    def f(v, fmt):
        return "" if v is None else format(v, fmt)

    for r in rows:
        out.append(f"| {r['model']} | {f(r['params'] and r['params'] / 1e6, '.1f')} | {r['result']} | {r['stage']} | "
                   f"{f(r['err'], '.3g')} | {f(r['err16'], '.3g')} | {f(r['server_s'], '.3g')} | "
                   f"{f(r['torch_s'], '.3g')} | {r['why'].replace('|', '/')} |")
    passed = sum(r["result"] == "pass" for r in rows)
    failed = sum(r["result"] == "fail" for r in rows)
    out.append(f"\n{passed} pass, {failed} fail, {len(rows) - passed - failed} skipped")
    return "\n".join(out)


def zoo_arguments(doc, groups):
    """The options both zoo scripts take (zoo_train.py adds its own)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--threads", type=int, default=2, help="the server's host threads per device")
    parser.add_argument("--groups", default=groups)
    parser.add_argument("--only", default="", help="comma-separated model names")
    parser.add_argument("--skip", default="", help="comma-separated model names")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    parser.add_argument("--out", default="", help="also write the table to this file")
    return parser


def selected_models(args, makers):
    """The models of the groups `args` names (makers: group -> generator of
    (name, ...) tuples), filtered by --only and --skip."""
    groups = set(args.groups.split(","))
    only = set(filter(None, args.only.split(",")))
    skip = set(filter(None, args.skip.split(",")))
    models = [m for g, make in makers if g in groups for m in make()]
    return [m for m in models if (not only or m[0] in only) and m[0] not in skip]


def each_row(server, models, new_row, check, progress):
    """One row per model: check(row, model) fills it; a failure is the row's
    `why` (the server's message, or the exception's type and text with a
    traceback on stderr), not the end of the run, unless the server exited."""
    rows = []
    for model in models:
        row = new_row(model[0])
        try:
            check(row, model)
        except Exception as e:  # one model's failure is a row, not the end
            row["why"] = why_failed(e)
            if not isinstance(e, npuserve.NpuError):
                row["why"] = f"{type(e).__name__}: {row['why']}"
                traceback.print_exc(limit=3, file=sys.stderr)
        rows.append(row)
        progress(row)
        if server.process.poll() is not None:
            raise RuntimeError(f"npu-server exited ({server.process.returncode}) on {model[0]}")
    return rows


def write_table(text, path):
    print(text)
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")


def main():
    parser = zoo_arguments(__doc__, "vision,segmentation,layers")
    parser.add_argument("--check", action="store_true", help="exit 1 when a model fails (CI's subset)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    models = selected_models(args, (("vision", vision_models), ("segmentation", segmentation_models),
                                    ("layers", layer_models)))
    server = Server(args.server, args.threads)
    try:
        with npuserve.connect(server.target, timeout=args.timeout) as npu:
            rows = each_row(server, models, new_row,
                            lambda row, m: check(npu, row, m[2], m[3], m[4], args.timeout),
                            lambda row: print(f"{row['model']}: {row['result']} {row['why']}", file=sys.stderr,
                                              flush=True))
    finally:
        server.stop()
    write_table(table(rows), args.out)
    if args.check and any(r["result"] == "fail" for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
