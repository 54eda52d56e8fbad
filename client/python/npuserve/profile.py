"""A run's profile as rows with CANN msprof's op_summary columns: the columns,
in the order, that `npu run --op-summary FILE.csv` writes (client/cli/op_summary.cc).
Cycles are modeled by the device simulator, not measured."""
import csv
import io

OP_SUMMARY_COLUMNS = [
    "Op Name", "OP Type", "Task Type", "Block Dim", "Task Duration(us)", "aicore_time(us)", "aic_total_cycles",
    "aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio", "aiv_vec_ratio",
    "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio",
]


def op_summary(profile):
    """One dict per node, keyed by OP_SUMMARY_COLUMNS, in execution order.

    Task Duration(us) = (end - start) / clock; aic_total_cycles = the op's
    core-cycles (its tiles' durations summed); aicore_time(us) = those / block
    dim / clock; <unit>_ratio = unit busy cycles / (task cycles * block dim).
    aic_* ratios are filled for AI_CORE tasks, aiv_* for AI_VECTOR_CORE ones;
    the others are None (msprof writes N/A).
    """
    mhz = profile.clock_mhz
    rows = []
    for node in profile.nodes:
        task = max(0, node.end_cycle - node.start_cycle)
        core_cycles = sum(t.end_cycle - t.start_cycle for t in node.tiles)
        block_dim = node.block_dim
        denominator = task * block_dim
        busy = node.busy
        aic = node.task_type == "AI_CORE"
        aiv = node.task_type == "AI_VECTOR_CORE"

        def ratio(cycles, applies):
            return cycles / denominator if applies and denominator > 0 else None

        rows.append(dict(zip(OP_SUMMARY_COLUMNS, [
            node.name, node.op_type, node.task_type, block_dim,
            task / mhz if mhz > 0 else None,
            core_cycles / block_dim / mhz if mhz > 0 and block_dim > 0 else None,
            core_cycles,
            ratio(busy.cube, aic), ratio(busy.scalar, aic), ratio(busy.mte1, aic), ratio(busy.mte2, aic),
            ratio(busy.fixpipe, aic),
            ratio(busy.vector, aiv), ratio(busy.scalar, aiv), ratio(busy.mte2, aiv), ratio(busy.mte3, aiv),
        ])))
    return rows


def op_summary_csv(profile):
    """The op summary as CSV text, exactly as `npu run --op-summary` writes it
    (three decimals, N/A where a column does not apply)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(OP_SUMMARY_COLUMNS)
    for row in op_summary(profile):
        writer.writerow([_cell(row[c]) for c in OP_SUMMARY_COLUMNS])
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
