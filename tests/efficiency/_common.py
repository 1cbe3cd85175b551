"""Shared command-line plumbing for the efficiency oracles (standard library only).

Every oracle reads one JSON configuration object from, in order of preference:
  --config '<json text>'      a JSON string on argv
  --config-file PATH          a file holding the JSON
  standard input              when neither flag is given and stdin is not a terminal
and a list of steps from --steps, written as a comma list and/or ranges:
  --steps 0,1,2,10            explicit values
  --steps 0:5                 0,1,2,3,4 (Python-style half-open range)
  --steps 0:100:10            0,10,...,90
  --steps 0:5,100,200:202     mixed
Output: with --json, one JSON document on stdout; otherwise a readable table.
"""
import argparse
import json
import sys


def parse_steps(text):
    out = []
    if text is None or text == "":
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            bits = [int(b) for b in part.split(":")]
            if len(bits) == 2:
                out.extend(range(bits[0], bits[1]))
            elif len(bits) == 3:
                out.extend(range(bits[0], bits[1], bits[2]))
            else:
                raise ValueError(f"bad step range {part!r}")
        else:
            out.append(int(part))
    return out


def add_common_args(parser, steps=True):
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    parser.add_argument("--config", help="JSON configuration text")
    parser.add_argument("--config-file", help="path of a JSON configuration file")
    parser.add_argument("--self-test", action="store_true", help="check hand-computed values and exit")
    if steps:
        parser.add_argument("--steps", help="steps to evaluate, e.g. 0,1,2 or 0:100 or 0:1000:50")


def load_config(args, required=True):
    if args.config is not None:
        return json.loads(args.config)
    if args.config_file is not None:
        with open(args.config_file) as f:
            return json.load(f)
    if not sys.stdin.isatty():
        text = sys.stdin.read()
        if text.strip():
            return json.loads(text)
    if required:
        raise SystemExit("no configuration: give --config, --config-file or JSON on stdin")
    return {}


def emit(obj, as_json, table_rows=None, header=None):
    if as_json:
        json.dump(obj, sys.stdout, indent=1, sort_keys=False, allow_nan=True)
        sys.stdout.write("\n")
        return
    if table_rows is None:
        print(json.dumps(obj, indent=1))
        return
    if header:
        print("\t".join(str(h) for h in header))
    for row in table_rows:
        print("\t".join(str(c) for c in row))


class SelfTest:
    """Tiny assertion collector: every check prints one line; the exit status is the verdict."""

    def __init__(self, name):
        self.name = name
        self.failures = 0
        self.count = 0

    def eq(self, what, got, want):
        self.count += 1
        ok = got == want
        if not ok:
            self.failures += 1
        print(f"{'ok  ' if ok else 'FAIL'} {what}: got {got!r}, want {want!r}")

    def close(self, what, got, want, rel=1e-12, abs_=0.0):
        self.count += 1
        ok = abs(got - want) <= max(abs_, rel * max(abs(got), abs(want)))
        if not ok:
            self.failures += 1
        print(f"{'ok  ' if ok else 'FAIL'} {what}: got {got!r}, want {want!r} (rel {rel}, abs {abs_})")

    def finish(self):
        print(f"{self.name}: {self.count - self.failures}/{self.count} checks passed")
        sys.exit(1 if self.failures else 0)


def parse_cli(doc, self_test, steps=True, extra=None):
    """Every oracle's command line: the common flags, extra(parser) for its own; --self-test
    runs self_test() (which exits). Returns (args, config or None)."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    add_common_args(p, steps=steps)
    if extra is not None:
        extra(p)
    args = p.parse_args()
    if args.self_test:
        self_test()
    return args, p
