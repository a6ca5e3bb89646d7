#!/usr/bin/env python3
"""Summarize a CSV file (standard library only).

Usage: python3 summarize.py FILE [--delimiter D] [--no-header] [--json]

Prints the row and column counts, then one block per column: its inferred type (integer,
float, boolean, date, text or empty), filled and missing counts, distinct values, min / max /
mean for numeric columns (plus min / max for dates) and the most common values for text.
The delimiter is sniffed (comma, semicolon, tab, pipe) unless given. Streams the file, so
large files are fine; distinct values are counted up to 10000 per column.
"""
import argparse
import collections
import csv
import json
import re
import sys

DISTINCT_CAP = 10000
MISSING = {"", "na", "n/a", "nan", "null", "none", "-"}
BOOLS = {"true", "false", "yes", "no"}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
INT = re.compile(r"^[+-]?\d+$")


def kind(value):
    v = value.replace(",", "") if re.match(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$", value) else value
    if INT.match(v):
        return "integer", int(v)
    try:
        f = float(v)
        if f == f and f not in (float("inf"), float("-inf")):
            return "float", f
    except ValueError:
        pass
    if value.lower() in BOOLS:
        return "boolean", None
    if DATE.match(value):
        return "date", value
    return "text", None


class Column:
    def __init__(self, name):
        self.name = name
        self.filled = self.missing = 0
        self.kinds = collections.Counter()
        self.values = collections.Counter()
        self.overflow = False
        self.num_min = self.num_max = None
        self.num_sum = 0.0
        self.num_count = 0
        self.date_min = self.date_max = None

    def add(self, raw):
        value = raw.strip()
        if value.lower() in MISSING:
            self.missing += 1
            return
        self.filled += 1
        k, parsed = kind(value)
        self.kinds[k] += 1
        if value in self.values or len(self.values) < DISTINCT_CAP:
            self.values[value] += 1
        else:
            self.overflow = True
        if k in ("integer", "float"):
            self.num_count += 1
            self.num_sum += parsed
            self.num_min = parsed if self.num_min is None else min(self.num_min, parsed)
            self.num_max = parsed if self.num_max is None else max(self.num_max, parsed)
        elif k == "date":
            self.date_min = parsed if self.date_min is None else min(self.date_min, parsed)
            self.date_max = parsed if self.date_max is None else max(self.date_max, parsed)

    def type(self):
        if not self.filled:
            return "empty"
        kinds = set(self.kinds)
        if kinds == {"integer"}:
            return "integer"
        if kinds <= {"integer", "float"}:
            return "float"
        if len(kinds) == 1:
            return kinds.pop()
        return "text"

    def summary(self):
        t = self.type()
        out = {"name": self.name, "type": t, "filled": self.filled, "missing": self.missing,
               "distinct": len(self.values), "distinct_capped": self.overflow}
        if t in ("integer", "float"):
            out.update(min=self.num_min, max=self.num_max, mean=round(self.num_sum / self.num_count, 6))
        elif t == "date":
            out.update(min=self.date_min, max=self.date_max)
        elif t in ("text", "boolean"):
            out["top"] = [[v, n] for v, n in self.values.most_common(3)]
            if self.num_count:
                out["numeric_values"] = self.num_count
        return out


def sniff(path, given):
    if given:
        return given.encode().decode("unicode_escape")
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        sample = f.read(65536)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        # Ragged rows defeat the sniffer: take the separator the header line uses most.
        header = sample.splitlines()[0] if sample else ""
        best = max(",;\t|", key=header.count)
        return best if header.count(best) else ","


def summarize(path, delimiter=None, header=True):
    delim = sniff(path, delimiter)
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        reader = csv.reader(f, delimiter=delim)
        first = next(reader, None)
        if first is None:
            return {"file": path, "delimiter": delim, "rows": 0, "columns": 0, "ragged_rows": 0, "column_summaries": []}
        names = [n.strip() or f"column_{i + 1}" for i, n in enumerate(first)] if header else [f"column_{i + 1}" for i in range(len(first))]
        cols = [Column(n) for n in names]
        rows = ragged = 0

        def feed(row):
            nonlocal rows, ragged
            if not any(cell.strip() for cell in row):
                return
            rows += 1
            if len(row) != len(cols):
                ragged += 1
            while len(row) > len(cols):
                cols.append(Column(f"column_{len(cols) + 1}"))
                cols[-1].missing = rows - 1
            for i, col in enumerate(cols):
                col.add(row[i] if i < len(row) else "")

        if not header:
            feed(first)
        for row in reader:
            feed(row)
    return {"file": path, "delimiter": delim, "rows": rows, "columns": len(cols), "ragged_rows": ragged,
            "column_summaries": [c.summary() for c in cols]}


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e15 else repr(v)
    return str(v)


def render(s):
    lines = [f"file={s['file']} rows={s['rows']} columns={s['columns']} delimiter={s['delimiter']!r}"]
    if s["ragged_rows"]:
        lines.append(f"warning: {s['ragged_rows']} rows have a different number of fields than the header")
    for c in s["column_summaries"]:
        distinct = f"{c['distinct']}{'+' if c['distinct_capped'] else ''}"
        line = f"- {c['name']}: type={c['type']} filled={c['filled']} missing={c['missing']} distinct={distinct}"
        if "mean" in c:
            line += f" min={fmt(c['min'])} max={fmt(c['max'])} mean={fmt(c['mean'])}"
        elif "min" in c:
            line += f" min={c['min']} max={c['max']}"
        if c.get("top"):
            line += " top=" + ", ".join(f"{v!r} ({n})" for v, n in c["top"])
        lines.append(line)
    return "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser(description="Summarize a CSV file.")
    p.add_argument("file")
    p.add_argument("--delimiter", help="field separator (default: sniffed); \\t for tab")
    p.add_argument("--no-header", action="store_true", help="the first row is data, not column names")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    a = p.parse_args(argv)
    try:
        s = summarize(a.file, a.delimiter, not a.no_header)
    except OSError as err:
        print(f"summarize.py: {a.file}: {err.strerror or err}", file=sys.stderr)
        return 1
    except csv.Error as err:
        print(f"summarize.py: {a.file}: not readable as CSV ({err})", file=sys.stderr)
        return 1
    print(json.dumps(s, indent=2) if a.json else render(s))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
