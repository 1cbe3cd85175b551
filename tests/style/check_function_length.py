#!/usr/bin/env python3
"""No non-test function over 60 lines in src/cli, src/engine, src/nn and src/parallel.

A function is a brace block whose enclosing blocks are only namespaces, classes and structs
(so a lambda or a loop counts toward the function around it); its length runs from the line
of its opening brace to the line of its closing one. Comments and string literals are blanked
first, so braces inside them do not count.

  check_function_length.py SRC_DIR      exit 1 and list every longer function
"""
import glob
import os
import re
import sys

FOLDERS = ("cli", "engine", "nn", "parallel")
LIMIT = 60


def long_functions(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    found, stack = [], []
    for i, line in enumerate(text.split("\n")):
        for ch in line:
            if ch == "{":
                scope = bool(re.match(r"^\s*(namespace|extern)\b", line))
                kind = bool(re.match(r"^\s*(template <[^>]*>\s*)?(struct|class|union|enum)\b", line))
                stack.append((i, scope or kind))
            elif ch == "}" and stack:
                start, container = stack.pop()
                if not container and all(c for _, c in stack) and i - start + 1 > LIMIT:
                    found.append((start + 1, i - start + 1))
    return found


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    bad = []
    for folder in FOLDERS:
        for path in sorted(glob.glob(os.path.join(argv[1], folder, "**", "*.*"), recursive=True)):
            if path.endswith((".cc", ".h")) and not path.endswith("_test.cc"):
                bad += [f"{os.path.relpath(path, argv[1])}:{line}: {n} lines" for line, n in long_functions(path)]
    print("\n".join(bad) if bad else f"no function over {LIMIT} lines in src/{{{','.join(FOLDERS)}}}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
