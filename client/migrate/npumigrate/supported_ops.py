"""The ops the server runs, read from docs/ops.md.

docs/ops.md is generated from the server's op registry by npu-ops-doc, and a
test (OpsDocTest) fails when the two differ, so the table is the registry of
this source tree without a server to ask: a migration report is usually made
on a laptop, long before a server is up. --ops points at the ops.md of the
server version you will run on.
"""
import os

BEGIN, END = "<!-- BEGIN npu-ops-doc -->", "<!-- END npu-ops-doc -->"


def default_ops_path():
    """ops.md next to the tool (installed or build copy), else the source tree's docs/ops.md."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.path.join(here, "ops.md"), os.path.join(here, "..", "..", "docs", "ops.md")):
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
    return None


def read_supported_ops(path):
    """The op names of the table between the npu-ops-doc markers."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{path}: no op table between {BEGIN} and {END}")
    table = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    ops = set()
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or cells[0] in ("Op", "") or set(cells[0]) <= {"-", ":"}:
            continue
        ops.add(cells[0])
    if not ops:
        raise ValueError(f"{path}: the op table is empty")
    return ops
