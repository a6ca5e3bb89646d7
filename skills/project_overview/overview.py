#!/usr/bin/env python3
"""Overview of a project folder (standard library only).

Usage: python3 overview.py [FOLDER] [--depth N] [--top N] [--all]

Prints, for FOLDER (default: the current folder):
  summary    files, folders and total size
  tree       folders and files down to --depth (default 2) with sizes; folders show
             their total size and file count, long listings are cut
  languages  files, lines and bytes per language (by file extension)
  largest    the --top (default 10) largest files
  todos      TODO / FIXME / XXX / HACK markers: the total and the files with the most
Skips version-control folders, dependency and build folders (.git, node_modules, .venv,
__pycache__, dist, build, ...) unless --all. Binary files are counted in sizes only.
"""
import argparse
import collections
import os
import re
import sys

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
             ".pytest_cache", ".tox", "dist", "build", "target", ".next", ".cache", ".harness", "coverage"}
LANGUAGES = {
    ".py": "Python", ".ts": "TypeScript", ".tsx": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript",
    ".js": "JavaScript", ".jsx": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".go": "Go",
    ".rs": "Rust", ".java": "Java", ".kt": "Kotlin", ".c": "C", ".h": "C/C++ header", ".cc": "C++",
    ".cpp": "C++", ".hpp": "C/C++ header", ".cs": "C#", ".rb": "Ruby", ".php": "PHP", ".swift": "Swift",
    ".scala": "Scala", ".sh": "Shell", ".bash": "Shell", ".sql": "SQL", ".html": "HTML", ".css": "CSS",
    ".scss": "SCSS", ".md": "Markdown", ".rst": "reStructuredText", ".txt": "Text", ".json": "JSON",
    ".jsonl": "JSON Lines", ".yaml": "YAML", ".yml": "YAML", ".toml": "TOML", ".xml": "XML", ".csv": "CSV",
    ".ini": "INI", ".cfg": "INI", ".lua": "Lua", ".r": "R", ".dart": "Dart", ".vue": "Vue", ".proto": "Protobuf",
}
SPECIAL = {"Dockerfile": "Dockerfile", "Makefile": "Makefile"}
TODO = re.compile(rb"\b(TODO|FIXME|XXX|HACK)\b")
MAX_SCAN_BYTES = 2_000_000
MAX_ENTRIES_PER_DIR = 25


def human(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def language(name):
    if name in SPECIAL:
        return SPECIAL[name]
    return LANGUAGES.get(os.path.splitext(name)[1].lower(), "Other")


class Scan:
    def __init__(self, root, include_all):
        self.root = root
        self.include_all = include_all
        self.files = []  # (relative path, size)
        self.dirs = 0
        self.langs = collections.defaultdict(lambda: [0, 0, 0])  # files, lines, bytes
        self.todos = collections.Counter()
        self.skipped = []

    def run(self):
        for dirpath, dirnames, filenames in os.walk(self.root):
            keep = []
            for d in sorted(dirnames):
                if not self.include_all and d in SKIP_DIRS:
                    self.skipped.append(os.path.relpath(os.path.join(dirpath, d), self.root))
                elif not os.path.islink(os.path.join(dirpath, d)):
                    keep.append(d)
            dirnames[:] = keep
            self.dirs += len(keep)
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                try:
                    size = os.path.getsize(full)
                except OSError:
                    continue
                rel = os.path.relpath(full, self.root)
                self.files.append((rel, size))
                self.count(full, rel, name, size)
        return self

    def count(self, full, rel, name, size):
        lang = self.langs[language(name)]
        lang[0] += 1
        lang[2] += size
        if size > MAX_SCAN_BYTES:
            return
        try:
            with open(full, "rb") as f:
                data = f.read()
        except OSError:
            return
        if b"\0" in data[:8192]:
            return
        lang[1] += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        found = len(TODO.findall(data))
        if found:
            self.todos[rel] = found


def tree(files, depth):
    """Nested dict of folders; each node: {"size", "count", "dirs", "files"}."""
    root = {"size": 0, "count": 0, "dirs": {}, "files": []}
    for rel, size in files:
        parts = rel.split(os.sep)
        node = root
        node["size"] += size
        node["count"] += 1
        for part in parts[:-1]:
            node = node["dirs"].setdefault(part, {"size": 0, "count": 0, "dirs": {}, "files": []})
            node["size"] += size
            node["count"] += 1
        node["files"].append((parts[-1], size))
    lines = []

    def show(node, indent, level):
        entries = [(n, d, True) for n, d in sorted(node["dirs"].items())] + [(n, s, False) for n, s in node["files"]]
        for i, (name, item, is_dir) in enumerate(entries):
            if i == MAX_ENTRIES_PER_DIR:
                lines.append(f"{indent}... {len(entries) - i} more entries")
                break
            if is_dir:
                files_word = "file" if item["count"] == 1 else "files"
                lines.append(f"{indent}{name}/  ({human(item['size'])}, {item['count']} {files_word})")
                if level < depth:
                    show(item, indent + "  ", level + 1)
            else:
                lines.append(f"{indent}{name}  ({human(item)})")

    show(root, "  ", 1)
    return lines


def main(argv):
    p = argparse.ArgumentParser(description="Overview of a project folder.")
    p.add_argument("folder", nargs="?", default=".")
    p.add_argument("--depth", type=int, default=2, help="tree depth (default 2)")
    p.add_argument("--top", type=int, default=10, help="how many largest files / TODO files (default 10)")
    p.add_argument("--all", action="store_true", help="do not skip .git, node_modules, build folders, ...")
    a = p.parse_args(argv)
    if not os.path.isdir(a.folder):
        print(f"overview.py: {a.folder}: not a folder", file=sys.stderr)
        return 1
    s = Scan(a.folder, a.all).run()
    total = sum(size for _, size in s.files)
    out = ["== summary", f"folder={os.path.abspath(a.folder)} files={len(s.files)} folders={s.dirs} size={human(total)}"]
    if s.skipped:
        out.append(f"skipped: {', '.join(s.skipped[:10])}{' ...' if len(s.skipped) > 10 else ''} (use --all to include)")
    out += ["", f"== tree (depth {a.depth})", "  ./"] + tree(s.files, a.depth)
    out += ["", "== languages (files, lines, size)"]
    for name, (n, lines, size) in sorted(s.langs.items(), key=lambda kv: (-kv[1][1], -kv[1][2], kv[0])):
        out.append(f"{name}: files={n} lines={lines} size={human(size)}")
    out += ["", f"== largest files (top {a.top})"]
    for rel, size in sorted(s.files, key=lambda f: (-f[1], f[0]))[: a.top]:
        out.append(f"{human(size):>10}  {rel}")
    out += ["", f"== todos total={sum(s.todos.values())} (TODO, FIXME, XXX, HACK)"]
    for rel, n in sorted(s.todos.items(), key=lambda kv: (-kv[1], kv[0]))[: a.top]:
        out.append(f"{n:>5}  {rel}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
