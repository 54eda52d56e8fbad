"""What changes on an NPU, found in a script's syntax tree.

One pass over the tree with the script's import aliases resolved
(`import torch.nn as nn` makes `nn.DataParallel` torch.nn.DataParallel):
device strings and calls (cuda -> npu), torch.cuda -> torch.npu, nccl -> hccl,
DataParallel -> DistributedDataParallel, amp and loss scaling, and the torch
calls whose ONNX ops the server lacks. Each finding is a Change (with an Edit
when the converted copy applies it) or an OpUse.
"""
import ast
import dataclasses
import re
from typing import Tuple

from npumigrate import torch_ops
from npumigrate.source_edits import Edit

CATEGORIES = ("device", "import", "distributed", "amp", "launch", "note")

_DEVICE = re.compile(r"^cuda(:\d+)?$")
_DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                  "torch.nn.parallel.data_parallel.DataParallel"}
_DDP = "torch.nn.parallel.DistributedDataParallel"
_DDP_NOTE = ("DataParallel (one process, many devices) does not run on NPUs: DistributedDataParallel runs one "
             "process per NPU. Review: call torch.distributed.init_process_group(backend=\"hccl\") and "
             "torch.npu.set_device(local_rank) first, pass device_ids=[local_rank], launch with "
             "torchrun --nproc_per_node=<NPUs>")
_LOSS_SCALE_NOTE = ("loss scaling on NPU: GradScaler works as on GPU; on Ascend 910 an fp16 overflow saturates to "
                    "+-65504 instead of inf, and the scaler learns of it from the device's float-status flag, "
                    "which torch_npu checks; a static scale (e.g. 128) is common for O2-style training")


@dataclasses.dataclass
class Change:
    line: int
    column: int          # 1-based, in characters
    category: str
    original: str        # the code as written
    converted: str       # the code as the converted copy has it (or should)
    note: str
    edits: Tuple[Edit, ...] = ()     # empty: reported, not applied

    @property
    def applied(self):
        return bool(self.edits)


@dataclasses.dataclass
class OpUse:
    line: int
    column: int
    api: str                 # torch.nn.LSTM, Tensor.cumsum
    onnx_ops: Tuple[str, ...]
    unsupported: Tuple[str, ...]
    note: str


class Analyzer(ast.NodeVisitor):
    def __init__(self, source, supported_ops):
        self.source = source
        self.supported = supported_ops
        self.aliases = {}
        self.parents = {}
        self.docstrings = set()
        self.changes = []
        self.op_uses = []
        self._noted = set()  # (line, note key) already reported

    # --- driving ------------------------------------------------------------

    def analyze(self, tree):
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
            if isinstance(parent, ast.Expr) and isinstance(parent.value, ast.Constant) and \
                    isinstance(parent.value.value, str):
                self.docstrings.add(parent.value)  # docstrings and bare strings: text, read by launch_lines
            if isinstance(parent, (ast.Import, ast.ImportFrom)):
                self._record_aliases(parent)
        self.visit(tree)
        self._insert_torch_npu_import(tree)
        return self.changes, self.op_uses

    def _record_aliases(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    self.aliases[top] = top
        elif node.module and node.level == 0:
            for a in node.names:
                self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def qualified(self, node):
        """The dotted name an expression stands for, through the imports; None if not imported."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    # --- helpers --------------------------------------------------------------

    def _segment(self, node):
        """The node's source on its first line."""
        end = node.end_col_offset if node.end_lineno == node.lineno else len(self.source.lines[node.lineno - 1]
                                                                               .rstrip("\r\n").encode("utf-8"))
        return self.source.segment(node.lineno, node.col_offset, end)

    def _column(self, line, byte_col):
        return len(self.source.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1

    def _change(self, node, category, note, edit=None, converted=None):
        original = self._segment(node)
        if converted is None:
            converted = original
            if edit is not None and edit.line == node.lineno and not edit.insert_line:
                b = original.encode("utf-8")
                start, end = edit.start - node.col_offset, edit.end - node.col_offset
                converted = (b[:start] + edit.text.encode("utf-8") + b[end:]).decode("utf-8")
        self.changes.append(Change(node.lineno, self._column(node.lineno, node.col_offset), category, original,
                                   converted, note, (edit,) if edit is not None else ()))

    def _note_once(self, node, key, category, note):
        if (node.lineno, key) in self._noted:
            return
        self._noted.add((node.lineno, key))
        self._change(node, category, note)

    def _replace_tail(self, node, old, new):
        """An Edit replacing the last len(old) bytes of node's span (an attribute name)."""
        if node.end_lineno is None:
            return None
        text = self.source.segment(node.end_lineno, node.end_col_offset - len(old.encode()), node.end_col_offset)
        if text != old:
            return None
        return Edit(node.end_lineno, node.end_col_offset - len(old.encode()), node.end_col_offset, new)

    def _outermost_attribute(self, node):
        while isinstance(self.parents.get(node), ast.Attribute):
            node = self.parents[node]
        parent = self.parents.get(node)
        return parent if isinstance(parent, ast.Call) and parent.func is node else node

    # --- rules ----------------------------------------------------------------

    def visit_Constant(self, node):
        if not isinstance(node.value, str) or node in self.docstrings or node.end_lineno != node.lineno:
            return
        value = node.value
        if _DEVICE.match(value):
            self._string_edit(node, "cuda", "npu", "device",
                              "device string: NPUs are \"npu:N\" (torch_npu); npuserve accepts cuda:N and maps it too")
        elif value == "nccl":
            self._string_edit(node, "nccl", "hccl", "distributed",
                              "collective backend: HCCL is the NPU's NCCL (same torch.distributed API)")
        elif value == "CUDA_VISIBLE_DEVICES":
            self._string_edit(node, "CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "device",
                              "the NPU runtime's visible-device variable")
        elif value.startswith("NCCL_"):
            self._note_once(node, "nccl-env", "distributed",
                            f"{value} does not apply to HCCL: its settings are the HCCL_* variables "
                            "(HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT, ...)")
        elif value == "cudnn":
            self._note_once(node, "cudnn", "note", "cuDNN does not exist on NPUs")

    def _string_edit(self, node, old, new, category, note):
        segment = self._segment(node)
        at = segment.find(old)
        if at < 0:  # implicit concatenation or escapes: report only
            self._change(node, category, note + " (change it by hand)")
            return
        start = node.col_offset + len(segment[:at].encode("utf-8"))
        self._change(node, category, note, Edit(node.lineno, start, start + len(old.encode("utf-8")), new))

    def visit_JoinedStr(self, node):
        first = node.values[0] if node.values else None
        if (isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("cuda:")
                and node.end_lineno == node.lineno):
            self._string_edit(node, "cuda:", "npu:", "device", "device string: NPUs are \"npu:N\"")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        q = self.qualified(node)
        if q == "torch.cuda":
            outer = self._outermost_attribute(node)
            full = self.qualified(outer.func if isinstance(outer, ast.Call) else outer) or q
            note = f"{full} -> {full.replace('torch.cuda', 'torch.npu', 1)} (torch_npu mirrors torch.cuda)"
            if full.startswith("torch.cuda.amp.GradScaler"):
                note += "; " + _LOSS_SCALE_NOTE
            elif full.startswith("torch.cuda.amp"):
                note += "; autocast on NPU casts to fp16 (bf16 only on 910B-class chips)"
            self._change(outer, "amp" if ".amp" in full else "device", note, self._replace_tail(node, "cuda", "npu"))
        elif q and q.startswith("torch.backends.cudnn") and q.count(".") == 3:
            self._note_once(node, "cudnn", "note", f"{q} has no effect on NPUs (there is no cuDNN); drop it or leave it")
        elif node.attr == "is_cuda" and not (q and q.startswith("torch")):
            self._change(node, "device", "tensor.is_cuda -> tensor.is_npu (torch_npu)",
                         self._replace_tail(node, "is_cuda", "is_npu"))
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.module and (node.module == "torch.cuda" or node.module.startswith("torch.cuda.")):
            line = self.source.line(node.lineno)
            m = re.search(r"\btorch\.cuda\b", line)
            if m:
                start = len(line[:m.start()].encode("utf-8"))
                self._change(node, "amp" if "amp" in node.module else "device",
                             f"from {node.module} -> from {node.module.replace('torch.cuda', 'torch.npu', 1)}",
                             Edit(node.lineno, start + len("torch."), start + len("torch.cuda"), "npu"))
        elif node.module == "apex" or (node.module or "").startswith("apex."):
            self._note_once(node, "apex", "amp",
                            "apex on NPU: install Ascend's apex build (same amp API); "
                            "amp.initialize(..., combine_grad=True) fuses the gradient buffers on NPU")
        self.generic_visit(node)

    def visit_Import(self, node):
        if any(a.name == "apex" or a.name.startswith("apex.") for a in node.names):
            self._note_once(node, "apex", "amp", "apex on NPU: install Ascend's apex build (same amp API)")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        q = self.qualified(func)
        if isinstance(func, ast.Attribute) and func.attr == "cuda" and not (q and q.startswith("torch.")):
            self._change(node, "device", ".cuda() -> .npu() (torch_npu): moves the tensor or module to the NPU",
                         self._replace_tail(func, "cuda", "npu"))
        elif q in _DATA_PARALLEL:
            self._change(node, "distributed", _DDP_NOTE,
                         Edit(func.lineno, func.col_offset, func.end_col_offset, _DDP)
                         if func.end_lineno == func.lineno else None)
        elif q == "torch.distributed.init_process_group":
            self._backend(node)
        elif q == "apex.amp.initialize":
            level = next((k.value.value for k in node.keywords if k.arg == "opt_level"
                          and isinstance(k.value, ast.Constant)), None)
            self._change(node, "amp", f"apex amp.initialize (opt_level {level or 'O1, the default'}) on NPU: "
                         "add combine_grad=True; O2 keeps fp16 weights with fp32 master weights. " + _LOSS_SCALE_NOTE)
        elif q == "apex.amp.scale_loss":
            self._note_once(node, "scale_loss", "amp", "amp.scale_loss works unchanged; " + _LOSS_SCALE_NOTE)
        elif q in ("apex.parallel.DistributedDataParallel", "apex.parallel.convert_syncbn_model"):
            self._change(node, "distributed", f"{q}: use torch.nn.parallel.DistributedDataParallel (and "
                         "torch.nn.SyncBatchNorm.convert_sync_batchnorm) with the hccl backend")
        elif q and q.startswith(("torch.cuda.amp.GradScaler", "torch.cuda.amp.autocast")) and \
                isinstance(func, ast.Name):  # imported by name: the import line changes, this is the note
            self._note_once(node, "amp", "amp", (_LOSS_SCALE_NOTE if "GradScaler" in q else
                                                 "autocast on NPU casts to fp16 (bf16 only on 910B-class chips)"))
        elif q in ("torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler"):
            self._change(node, "amp", f"{q}: device_type \"npu\"" +
                         ("; " + _LOSS_SCALE_NOTE if q.endswith("GradScaler") else
                          "; fp16 on NPU (bf16 only on 910B-class chips)"))
        elif q == "torch.multiprocessing.spawn":
            self._note_once(node, "spawn", "launch", "mp.spawn on NPU: one process per NPU, "
                            "nprocs=torch.npu.device_count(); call torch.npu.set_device(rank) in each")
        self._op_use(node, func, q)
        self.generic_visit(node)

    def _backend(self, node):
        given = [k for k in node.keywords if k.arg == "backend"]
        if given or node.args:
            return  # a "nccl" literal is changed by the string rule; a variable is the user's
        if node.end_lineno != node.lineno:
            self._change(node, "distributed", "init_process_group without a backend: pass backend=\"hccl\"")
            return
        paren = self._segment(node).find("(")
        at = node.col_offset + len(self._segment(node)[:paren + 1].encode("utf-8"))
        text = "backend=\"hccl\"" + (", " if node.keywords else "")
        self._change(node, "distributed", "init_process_group without a backend picks NCCL on GPUs: "
                     "backend=\"hccl\" on NPUs", Edit(node.lineno, at, at, text))

    def _op_use(self, node, func, q):
        if q in torch_ops.FUNCTIONS:
            api, ops = q, torch_ops.FUNCTIONS[q]
        elif (isinstance(func, ast.Attribute) and func.attr in torch_ops.METHODS
              and not (self.qualified(func.value) or "").startswith("torch")
              and not (isinstance(func.value, ast.Name) and func.value.id == "self")):
            api, ops = f"Tensor.{func.attr}", torch_ops.METHODS[func.attr]
        else:
            return
        missing = tuple(op for op in ops if op not in self.supported)
        limit = torch_ops.LIMITS.get(api)
        if missing or limit:
            note = limit or ("the server has no " + ", ".join(missing) +
                             ": export fails to run there; replace the call or keep it on the host")
            if api in torch_ops.LOSSES and not limit:
                note = ("a loss: in an exported graph only to train on the device, and the server has no " +
                        ", ".join(missing) + "; compose it from LogSoftmax, Mul and ReduceMean, or keep it on the "
                        "host")
            if api.startswith("Tensor."):
                note += " (a method call: if the object is not a tensor, ignore this row)"
            self.op_uses.append(OpUse(node.lineno, self._column(node.lineno, node.col_offset), api, ops, missing,
                                      note))
        else:
            self.op_uses.append(OpUse(node.lineno, self._column(node.lineno, node.col_offset), api, ops, (), ""))

    def _insert_torch_npu_import(self, tree):
        if not self.changes or "torch_npu" in self.aliases:
            return
        for stmt in tree.body:
            is_torch = (isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == "torch" for a in stmt.names)) or \
                       (isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] == "torch")
            if is_torch:
                line = stmt.end_lineno + 1
                self.changes.append(Change(
                    line, 1, "import", self.source.line(stmt.lineno), "import torch_npu",
                    "torch_npu registers the npu device, tensor.npu() and torch.npu (after import torch)",
                    (Edit(line, 0, 0, "import torch_npu  # noqa: F401  (added by npu migrate)", insert_line=True),)))
                return
