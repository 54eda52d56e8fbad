"""A run's profile as rows of CANN msprof's op_summary: the layout, columns
and definitions `npu run --op-summary FILE.csv` writes (client/cli/op_summary.cc),
msprof's for the chip: the Atlas A2 layout on separated chips (910B), the
Atlas training layout on coupled ones (910, 310). Cycles are modeled by the
device simulator, not measured."""
import csv
import io

from npuserve._stubs import tensor_pb2

# msprof's PipeUtilization op_summary of an Atlas A2 (separated) chip.
OP_SUMMARY_COLUMNS = [
    "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
    "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
    "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats",
    "Context ID", "aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)",
    "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio",
    "aic_fixpipe_time(us)", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
    "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
    "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)",
]

# msprof's PipeUtilization op_summary of an Atlas training (coupled) chip.
COUPLED_OP_SUMMARY_COLUMNS = [
    "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "Task Type", "Task Start Time(us)",
    "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Input Shapes", "Input Data Types", "Input Formats",
    "Output Shapes", "Output Data Types", "Output Formats", "aicore_time(us)", "total_cycles", "vec_time(us)",
    "vec_ratio", "mac_time(us)", "mac_ratio", "scalar_time(us)", "scalar_ratio", "mte1_time(us)", "mte1_ratio",
    "mte2_time(us)", "mte2_ratio", "mte3_time(us)", "mte3_ratio", "icache_miss_rate", "memory_bound",
]


def op_summary_columns(profile):
    """The columns msprof writes for the profile's chip."""
    return COUPLED_OP_SUMMARY_COLUMNS if profile.core_architecture == "coupled" else OP_SUMMARY_COLUMNS


def _task_span(node):
    """(issue, done) cycles; profiles of servers before model v3 have only the blocks' span."""
    v3 = node.complete_cycle != 0 or node.end_cycle == 0
    issue = node.dispatch_cycle if v3 else node.start_cycle
    done = node.complete_cycle if v3 else node.end_cycle
    return issue, max(done, issue)


def _device_index(device):
    head, _, tail = device.rpartition(":")
    return int(tail) if head and tail.isdigit() else None


def _joined(tensors, part):
    return ";".join(part(t) for t in tensors) if len(tensors) else None


def _row(profile, node, index, previous_end, dtype_name):
    mhz = profile.clock_mhz if profile.clock_mhz > 0 else 1.0
    issue, done = _task_span(node)
    total = sum(t.end_cycle - t.start_cycle for t in node.tiles)
    block_dim = node.block_dim
    busy = node.busy
    cores = block_dim > 0 and total > 0
    row = {
        "Device_id": _device_index(profile.device), "Model ID": None, "Task ID": index, "Stream ID": None,
        "Op Name": node.name, "OP Type": node.op_type, "OP State": "static", "Task Type": node.task_type,
        "Task Start Time(us)": max(0, issue - profile.start_cycle) / mhz,
        "Task Duration(us)": (done - issue) / mhz,
        "Task Wait Time(us)": max(0, issue - previous_end) / mhz,
        "Block Dim": block_dim, "Mix Block Dim": 0, "HF32 Eligible": "NO",
        "Input Shapes": _joined(node.inputs, lambda t: ",".join(str(d) for d in t.shape)),
        "Input Data Types": _joined(node.inputs, lambda t: dtype_name(t.dtype)),
        "Input Formats": _joined(node.inputs, lambda t: t.format),
        "Output Shapes": _joined(node.outputs, lambda t: ",".join(str(d) for d in t.shape)),
        "Output Data Types": _joined(node.outputs, lambda t: dtype_name(t.dtype)),
        "Output Formats": _joined(node.outputs, lambda t: t.format),
        "Context ID": None,
    }
    core_time = total / block_dim / mhz if cores else None

    def unit(prefix, on, cycles):
        row[prefix + "_time(us)"] = cycles / block_dim / mhz if on and cores else None
        row[prefix + "_ratio"] = cycles / total if on and cores else None

    if profile.core_architecture == "coupled":
        on = node.task_type == "AI_CORE"
        row["aicore_time(us)"] = core_time if on else None
        row["total_cycles"] = total if on and cores else None
        for prefix, cycles in (("vec", busy.vector), ("mac", busy.cube), ("scalar", busy.scalar),
                               ("mte1", busy.mte1), ("mte2", busy.mte2), ("mte3", busy.mte3)):
            unit(prefix, on, cycles)
        row["icache_miss_rate"] = None
        compute = max(busy.cube, busy.vector)
        row["memory_bound"] = busy.mte2 / compute if on and cores and compute > 0 else None
    else:
        aic, aiv = node.task_type == "AI_CORE", node.task_type == "AI_VECTOR_CORE"
        row["aicore_time(us)"] = core_time if aic else None
        row["aic_total_cycles"] = total if aic and cores else None
        for prefix, cycles in (("aic_mac", busy.cube), ("aic_scalar", busy.scalar), ("aic_mte1", busy.mte1),
                               ("aic_mte2", busy.mte2), ("aic_fixpipe", busy.fixpipe)):
            unit(prefix, aic, cycles)
        row["aic_icache_miss_rate"] = None
        row["aiv_time(us)"] = core_time if aiv else None
        row["aiv_total_cycles"] = total if aiv and cores else None
        for prefix, cycles in (("aiv_vec", busy.vector), ("aiv_scalar", busy.scalar), ("aiv_mte2", busy.mte2),
                               ("aiv_mte3", busy.mte3)):
            unit(prefix, aiv, cycles)
        row["aiv_icache_miss_rate"] = None
        cube_cores = sum(1 for c in profile.cores if c.kind == "aic")
        task = done - issue
        row["cube_utilization(%)"] = 100.0 * busy.cube / (task * cube_cores) if aic and task > 0 and cube_cores else None
    return row


def op_summary(profile):
    """One dict per node, keyed by op_summary_columns(profile), in execution order.

    As msprof defines them: Task Start Time(us) = issue, from the run's
    arrival; Task Duration(us) = issue to done; Task Wait Time(us) = from the
    previous task's end to this one's issue; aic_total_cycles = the op's block
    durations summed; aicore_time(us) = those / block dim / clock;
    <unit>_time(us) = unit busy cycles / block dim / clock; <unit>_ratio =
    unit busy cycles / aic_total_cycles. Cells that do not apply are None
    (msprof writes N/A).
    """
    def dtype_name(d):
        return tensor_pb2.DataType.Name(d)

    columns = op_summary_columns(profile)
    rows = []
    previous_end = profile.start_cycle
    for index, node in enumerate(profile.nodes):
        row = _row(profile, node, index, previous_end, dtype_name)
        rows.append({c: row.get(c) for c in columns})
        previous_end = max(previous_end, _task_span(node)[1])
    return rows


def op_summary_csv(profile):
    """The op summary as CSV text, exactly as `npu run --op-summary` writes it
    (three decimals, N/A where a column does not apply)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = op_summary_columns(profile)
    writer.writerow(columns)
    for row in op_summary(profile):
        writer.writerow([_cell(row[c]) for c in columns])
    return out.getvalue()


def write_op_summary_csv(profile, path):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(op_summary_csv(profile))


def _cell(value):
    if value is None:
        return "N/A"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
