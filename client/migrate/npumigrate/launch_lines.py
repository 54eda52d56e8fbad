"""Launch lines: the commands, in a script's comments, docstrings and strings,
that start training on GPUs (CUDA_VISIBLE_DEVICES=..., python -m
torch.distributed.launch, torchrun, mpirun). On an NPU server each rank should
also run on the CPU cores near its NPU: the hints say how (taskset, or
npu-server --cpu-affinity for npuserve itself)."""
import re

from npumigrate.rules import Change
from npumigrate.source_edits import Edit

# A command line: after a comment's '#', a shell prompt '$ ' or a label such as
# "or:" or "Launch (8 GPUs):", optional VAR=value assignments, then a launcher.
_LEAD = re.compile(r"^\s*(#+\s*)?(\$\s+)?([A-Za-z][\w ()]*:\s+)?")
_LAUNCH = re.compile(r"^([A-Z_][A-Z0-9_]*=\S*\s+)*(torchrun|python3?|mpirun|deepspeed)\b")
_REWRITES = [
    (re.compile(r"CUDA_VISIBLE_DEVICES="), "ASCEND_RT_VISIBLE_DEVICES="),
    (re.compile(r"python3?\s+-m\s+torch\.distributed\.launch\b"), "torchrun"),
]
_AFFINITY = ("bind each process to the CPU cores next to its NPU, e.g. with 8 NPUs and 192 cores, rank R on cores "
             "R*24 to R*24+23: `taskset -c 0-23 python ...` for rank 0, or os.sched_setaffinity in the script "
             "(npuserve's own server: npu-server --cpu-affinity 0-1)")
_MULTI = ("torchrun starts one process per NPU with --nproc_per_node=<NPUs>; the script reads LOCAL_RANK, calls "
          "torch.npu.set_device(local_rank) and init_process_group(backend=\"hccl\"); ")


def launch_changes(source, text_lines):
    """Changes for the launch lines among `text_lines` (1-based numbers of lines
    that are comments, docstrings or string literals)."""
    changes = []
    for number in sorted(text_lines):
        line = source.line(number)
        if not _LAUNCH.match(line[_LEAD.match(line).end():]):
            continue
        matches = sorted((m.start(), m.end(), replacement) for pattern, replacement in _REWRITES
                         for m in pattern.finditer(line))
        converted = line
        for start, end, replacement in reversed(matches):
            converted = converted[:start] + replacement + converted[end:]
        edits = tuple(Edit(number, len(line[:start].encode()), len(line[:end].encode()), replacement)
                      for start, end, replacement in matches)
        multi = re.search(r"torchrun|torch\.distributed|mpirun|deepspeed", line) is not None
        first = len(line) - len(line.lstrip())
        changes.append(Change(number, first + 1, "launch", line.strip(), converted.strip(),
                              (_MULTI if multi else "") + _AFFINITY, edits))
    return changes
