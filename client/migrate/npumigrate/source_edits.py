"""Replacing spans of source text located by ast positions.

ast gives columns as byte offsets into the UTF-8 encoding of a line; edits are
applied on bytes, last first, so earlier positions stay valid.
"""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Edit:
    line: int       # 1-based, as ast
    start: int      # byte column where the replaced text begins
    end: int        # byte column after it (same line)
    text: str       # replacement
    insert_line: bool = False  # insert `text` as a whole line before `line` instead


class SourceText:
    def __init__(self, text):
        self.text = text
        self.lines = text.splitlines(keepends=True)

    def segment(self, line, start, end):
        """The text between byte columns [start, end) of a line."""
        return self.lines[line - 1].encode("utf-8")[start:end].decode("utf-8")

    def line(self, line):
        return self.lines[line - 1].rstrip("\r\n")

    def apply(self, edits):
        """The text with every edit made; overlapping edits keep the first given."""
        lines = [l.encode("utf-8") for l in self.lines]
        taken = {}
        chosen = []
        for e in edits:
            if e.insert_line:
                chosen.append(e)
                continue
            spans = taken.setdefault(e.line, [])
            if any(e.start < b and a < e.end for a, b in spans):
                continue
            spans.append((e.start, e.end))
            chosen.append(e)
        for e in sorted(chosen, key=lambda e: (e.line, e.start, not e.insert_line), reverse=True):
            if e.insert_line:
                if e.line - 1 >= len(lines) and lines and not lines[-1].endswith(b"\n"):
                    lines[-1] += b"\n"
                lines.insert(e.line - 1, (e.text + "\n").encode("utf-8"))
            else:
                b = lines[e.line - 1]
                lines[e.line - 1] = b[:e.start] + e.text.encode("utf-8") + b[e.end:]
        return b"".join(lines).decode("utf-8")
