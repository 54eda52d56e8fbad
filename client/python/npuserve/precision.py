"""msprobe's precision comparison of a torch module: `npuserve.compare` (this module, imported on first use).

    import torch, npuserve
    result = npuserve.compare(model.eval(), (x,), target="127.0.0.1:50051")
    result.first_divergence          # the first row that is an error, or None
    result.to_csv("compare_result.csv")

Every submodule's output on the NPU (the module exported unfused and run on
the server with the device's arithmetic) is compared with the same submodule's
output of torch in fp32 on the host, the bench, with msprobe's metrics and
verdicts, one row per output, keyed by module path in msprobe's format
(`Module.layer1.0.conv1.Conv2d.forward.0`, then `.output.N`), in the order the
forward hooks fire (a submodule before the module around it). The rules are
those of `npu compare` (docs/compare.md; client/cli/compare_metrics.h):
here each row is judged on its own tensors (msprobe's accuracy check, inf/NaN
positions, shapes and dtypes), not against its module's inputs.
"""
import csv

import numpy as np
import torch
from torch.utils import _pytree

from npuserve import module_scopes
from npuserve.client import connect

COLUMNS = ["NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape", "Bench Tensor Shape", "Cosine",
           "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio", "Five Thousandth Err Ratio",
           "Result", "Err_message"]
_EPS = np.finfo(np.float64).eps


def compare_tensors(npu, bench):
    """One row's metrics and verdict (the columns from Cosine on) for two arrays."""
    row = {c: "N/A" for c in COLUMNS[6:12]}
    messages = []

    def done(result):
        row["Result"], row["Err_message"] = result, " ".join(messages)
        return row

    n, b = np.asarray(npu, np.float64), np.asarray(bench, np.float64)
    if n.shape != b.shape:
        messages.append("Shape of NPU and bench tensor do not match. Skipped.")
        return done("error")
    if n.size == 0:
        messages.append("This is empty data, can not compare.")
        return done("pass")
    n, b = n.copy(), b.copy()
    n_bad, b_bad = ~np.isfinite(n), ~np.isfinite(b)
    if not np.array_equal(n_bad, b_bad) or not np.array_equal(np.isnan(n), np.isnan(b)):
        messages.append("The position of inf or nan in NPU and bench Tensor do not match.")
        return done("error")
    n[n_bad] = 0
    b[b_bad] = 0
    result = "pass"
    if npu.dtype != bench.dtype:
        messages.append("Dtype of NPU and bench tensor do not match.")
        result = "warning"
    zero = b == 0
    rel = np.abs(((n + zero * _EPS) - (b + zero * _EPS)) / (b + zero * _EPS))
    diff = n - b
    max_abs = float(np.max(np.abs(diff)))
    row["MaxAbsErr"], row["MaxRelativeErr"] = f"{max_abs:.6g}", f"{float(np.max(rel)):.6g}"
    cosine = 1.0
    cosine_na = False
    if n.ndim == 0:
        messages.append("This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One Thousandth Err "
                        "Ratio' and 'Five Thousandth Err Ratio'.")
        for c in ("Cosine", "EucDist", "One Thousandth Err Ratio", "Five Thousandth Err Ratio"):
            row[c] = "unsupported"
    else:
        row["EucDist"] = f"{float(np.sqrt(np.sum(diff * diff))):.6g}"
        row["One Thousandth Err Ratio"] = f"{float(np.mean(rel < 0.001)):.6g}"
        row["Five Thousandth Err Ratio"] = f"{float(np.mean(rel < 0.005)):.6g}"
        na, nb = float(np.linalg.norm(n)), float(np.linalg.norm(b))
        if n.size == 1:
            row["Cosine"] = "unsupported"
            messages.append("This is a 1-d tensor of length 1.")
        elif na <= _EPS and nb <= _EPS:
            row["Cosine"] = "1"
        elif na <= _EPS or nb <= _EPS:
            cosine_na = True
            side = "npu" if na <= _EPS else "Bench"
            messages.append(f"Cannot compare by Cosine Similarity, All the data is Zero in {side} dump data.")
        else:
            cosine = float(np.dot(n.ravel(), b.ravel()) / (na * nb))
            row["Cosine"] = f"{cosine:.6g}"
    if cosine_na or (cosine < 0.99 and max_abs > 0.001) or cosine < 0.9 or max_abs > 1:
        result = "error"
    return done(result)


class Comparison:
    """The rows of a comparison (dicts by COLUMNS), in forward order."""

    def __init__(self, rows):
        self.rows = rows

    @property
    def first_divergence(self):
        """The first row whose Result is an error (its module ran first), or None."""
        return next((r for r in self.rows if r["Result"] == "error"), None)

    def to_csv(self, path):
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(self.rows)


def _name(module, path):
    return f"Module.{path + '.' if path else ''}{type(module).__name__}.forward.0"


def _shape(a):
    return "[" + ", ".join(str(d) for d in a.shape) + "]"


def compare(module, example_inputs, *, client=None, target=None, device="npu:0", float_mode=None):
    """Compares every submodule of `module` (in eval mode) called on `example_inputs` (a tensor or a tuple) on the
    NPU against torch fp32 on the host. `client` (an npuserve.Client) or `target` (default 127.0.0.1:50051)
    names the server; `float_mode` ("saturation" or "inf_nan") the NPU run's fp16 conversions."""
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    args = tuple(a.detach().cpu() for a in args)
    # The bench: torch on the host, every module's outputs as its forward hook sees them.
    bench = {}

    def record(path):
        def hook(m, inputs, output):  # returns None: the module's output stays its own
            bench.setdefault(path, [t.detach().clone() if torch.is_tensor(t) else t
                                    for t in _pytree.tree_flatten(output)[0]])
        return hook

    handles = [m.register_forward_hook(record(path)) for path, m in module.named_modules()]
    try:
        with torch.no_grad():
            module(*args)
    finally:
        for h in handles:
            h.remove()
    export = module_scopes.UnfusedExport(module, args)
    paths = frozenset(p for p, _ in module.named_modules() if p)
    owns = client is None
    client = client or connect(target or "127.0.0.1:50051")
    try:
        graph = client.register(export.onnx, device)
        try:
            result = client.run(graph, {n: a for n, a in zip(export.input_names, args)}, device=device, debug=True,
                                float_mode=float_mode)
        finally:
            client.unregister(graph)
    finally:
        if owns:
            client.close()
    values = {**result.intermediates, **result.outputs}
    outputs = {path: names for _, kind, path, _, _, names in module_scopes.submodule_values(export.model, module,
                                                                                            paths) if kind == "post"}
    outputs[""] = export.output_names
    rows = []
    order = [path for path in bench if path in outputs]  # the hooks' firing order
    modules = dict(module.named_modules())
    for path in order:
        names, expected = outputs[path], bench[path]
        key = _name(modules[path], path)
        if len(names) != len(expected):
            rows.append({**{c: "N/A" for c in COLUMNS}, "NPU Name": key, "Bench Name": key, "Result": "warning",
                         "Err_message": f"the export has {len(names)} outputs for the module's {len(expected)}"})
            continue
        for i, (name, want) in enumerate(zip(names, expected)):
            got = values.get(name)
            if got is None or not torch.is_tensor(want):
                continue
            want = want.detach().numpy()
            row = {"NPU Name": f"{key}.output.{i}", "Bench Name": f"{key}.output.{i}", "NPU Dtype": str(got.dtype),
                   "Bench Dtype": str(want.dtype), "NPU Tensor Shape": _shape(got), "Bench Tensor Shape": _shape(want)}
            row.update(compare_tensors(got, want))
            rows.append(row)
    return Comparison(rows)
