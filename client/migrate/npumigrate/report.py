"""change_list.csv, unsupported_op.csv and the summary printed at the end."""
import collections
import csv

CHANGE_COLUMNS = ["file", "line", "column", "category", "original", "converted", "applied", "note"]
UNSUPPORTED_COLUMNS = ["file", "line", "column", "api", "onnx_ops", "missing_ops", "note"]


def write_change_list(path, rows):
    """rows: (file, Change)."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CHANGE_COLUMNS)
        for file, c in sorted(rows, key=lambda r: (r[0], r[1].line, r[1].column)):
            w.writerow([file, c.line, c.column, c.category, c.original, c.converted, "yes" if c.applied else "no",
                        c.note])


def write_unsupported_ops(path, rows):
    """rows: (file, OpUse) of the uses the server cannot run as they are."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(UNSUPPORTED_COLUMNS)
        for file, u in sorted(rows, key=lambda r: (r[0], r[1].line, r[1].column)):
            w.writerow([file, u.line, u.column, u.api, " ".join(u.onnx_ops), " ".join(u.unsupported), u.note])


def summary(file, changes, op_uses):
    """Lines for the terminal: counts by category and the ops at stake."""
    by_category = collections.Counter(c.category for c in changes)
    applied = sum(1 for c in changes if c.applied)
    lines = [f"{file}: {len(changes)} changes ({applied} applied in the copy, {len(changes) - applied} to review): " +
             (", ".join(f"{n} {k}" for k, n in sorted(by_category.items())) or "none")]
    used = sorted({op for u in op_uses for op in u.onnx_ops})
    missing = collections.Counter(u.api for u in op_uses if u.unsupported or u.note)
    if used:
        lines.append(f"  ONNX ops its torch calls export to: {', '.join(used)}")
    if missing:
        lines.append("  the server cannot run as written: " +
                     ", ".join(f"{api} (x{n})" if n > 1 else api for api, n in sorted(missing.items())))
    return lines
