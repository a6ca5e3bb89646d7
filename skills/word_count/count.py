#!/usr/bin/env python3
"""Count lines, words and characters of text files (standard library only).

Usage: python3 count.py FILE [FILE ...]   ("-" reads standard input)

Prints `lines=L words=W chars=C` for one file; with several files each line starts with
the path and a final `total` line follows. lines counts text lines (a last line without a
trailing newline counts too), words are runs of non-whitespace, chars are Unicode
characters (not bytes). Exit status 1 when a file cannot be read.
"""
import sys


def count(text):
    return len(text.splitlines()), len(text.split()), len(text)


def read(path):
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    totals = [0, 0, 0]
    failed = False
    for path in argv:
        try:
            lines, words, chars = count(read(path))
        except OSError as err:
            print(f"count.py: {path}: {err.strerror or err}", file=sys.stderr)
            failed = True
            continue
        totals = [totals[0] + lines, totals[1] + words, totals[2] + chars]
        prefix = f"{path}: " if len(argv) > 1 else ""
        print(f"{prefix}lines={lines} words={words} chars={chars}")
    if len(argv) > 1:
        print(f"total: lines={totals[0]} words={totals[1]} chars={totals[2]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
