"""`npu migrate SCRIPT.py ... [--out DIR] [--ops OPS.md]`."""
import argparse
import ast
import io
import os
import sys
import tokenize

from npumigrate import report
from npumigrate.launch_lines import launch_changes
from npumigrate.rules import Analyzer
from npumigrate.source_edits import SourceText
from npumigrate.supported_ops import default_ops_path, read_supported_ops


def text_lines(text):
    """Numbers of the lines holding comments or string literals (docstrings included)."""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines


def migrate(path, supported):
    """(converted text, changes, op uses) of one script."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tree = ast.parse(text, filename=path)
    source = SourceText(text)
    changes, op_uses = Analyzer(source, supported).analyze(tree)
    changes += launch_changes(source, text_lines(text))
    converted = source.apply([e for c in changes for e in c.edits])
    return converted, changes, op_uses


def main(argv):
    parser = argparse.ArgumentParser(
        prog="npu migrate",
        description="Report what a PyTorch GPU training script changes on an Ascend NPU, line by line, and "
                    "write a converted copy with change_list.csv and unsupported_op.csv.")
    parser.add_argument("scripts", nargs="+", metavar="SCRIPT.py")
    parser.add_argument("--out", default="npu_migrate_out", metavar="DIR",
                        help="where the converted copies and the CSVs go (default: %(default)s)")
    parser.add_argument("--ops", default=None, metavar="OPS.md",
                        help="the server's op list (docs/ops.md, generated from its op registry); default: the one "
                             "installed with npu, or the source tree's")
    args = parser.parse_args(argv)

    ops_path = args.ops or default_ops_path()
    if ops_path is None:
        print("npu migrate: error: no docs/ops.md found; pass --ops PATH", file=sys.stderr)
        return 2
    try:
        supported = read_supported_ops(ops_path)
    except (OSError, ValueError) as e:
        print(f"npu migrate: error: {e}", file=sys.stderr)
        return 2
    names = [os.path.basename(p) for p in args.scripts]
    if len(set(names)) != len(names):
        print("npu migrate: error: two scripts share a file name; migrate them into different --out folders",
              file=sys.stderr)
        return 2

    os.makedirs(args.out, exist_ok=True)
    all_changes, all_unsupported = [], []
    for path, name in zip(args.scripts, names):
        try:
            converted, changes, op_uses = migrate(path, supported)
        except OSError as e:
            print(f"npu migrate: error: cannot read \"{path}\": {e.strerror}", file=sys.stderr)
            return 2
        except SyntaxError as e:
            print(f"npu migrate: error: {path}:{e.lineno}: {e.msg} (the tool reads Python 3 source)",
                  file=sys.stderr)
            return 2
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(converted)
        all_changes += [(name, c) for c in changes]
        all_unsupported += [(name, u) for u in op_uses if u.unsupported or u.note]
        for line in report.summary(name, changes, op_uses):
            print(line)
    report.write_change_list(os.path.join(args.out, "change_list.csv"), all_changes)
    report.write_unsupported_ops(os.path.join(args.out, "unsupported_op.csv"), all_unsupported)
    print(f"wrote {', '.join(names)}, change_list.csv, unsupported_op.csv to {args.out}/ (ops from {ops_path})")
    return 0
