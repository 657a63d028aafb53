"""What the kit's tests share: paths, the schema validator, a plan builder, and a way to run a
bench as a subprocess and check every line it writes against schemas/bench/v2/."""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
KIT = os.path.join(ROOT, "kit")
SCHEMAS = os.path.join(ROOT, "schemas")
TOY = os.path.join(HERE, "toy_bench.py")
sys.path.insert(0, KIT)

import drive_bench  # noqa: E402

VALIDATOR = drive_bench.SchemaValidator(SCHEMAS)
LINE_KINDS = ("header", "variant", "check", "trial", "skipped", "footer", "error")

TIME_US = {"name": "time_us", "unit": "us", "direction": "lower_is_better"}
ITEMS_PER_S = {"name": "items_per_s", "unit": "items/s", "direction": "higher_is_better"}
BYTES_PER_S = {"name": "bytes_per_s", "unit": "B/s", "direction": "higher_is_better"}
CPU_TIME_US = {"name": "cpu_time_us", "unit": "us", "direction": "lower_is_better"}


def make_plan(variants=("good",), points=(200,), metrics=(TIME_US, ITEMS_PER_S), judged="time_us", **extra):
    """A version 2 plan for the toy bench: each variant is named after its mode, each point is n."""
    plan = {"kind": "plan", "schema_version": 2, "backend": "auto",
            "variants": [{"name": v, "params": {"mode": v}} for v in variants],
            "points": [{"id": "n%d" % n, "axes": {"n": n}} for n in points],
            "metrics": list(metrics), "judged_metric": judged,
            "timing": {"min_trial_ms": 2, "warmup_ms": 1}}
    plan.update(extra)
    return plan


def measure(variant, point, trials=1):
    return {"kind": "measure", "variant": variant, "point": point, "trials": trials}


class BenchTestCase(unittest.TestCase):
    """run_bench(): the bench's stdout, every line parsed and validated (a test fails on any line
    that is not JSON or not valid for its kind)."""

    def run_bench(self, lines, script=TOY, args=(), timeout=120, cwd=None, env=None):
        text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
        p = subprocess.run([sys.executable, script, *args], input=text, capture_output=True, text=True,
                           timeout=timeout, cwd=cwd, env=None if env is None else dict(os.environ, **env))
        docs = [self.valid_line(raw) for raw in p.stdout.splitlines()]
        return p.returncode, docs, p.stderr

    def valid_line(self, raw):
        try:
            doc = json.loads(raw)
        except ValueError:
            self.fail("the bench wrote a line that is not JSON: %r" % raw)
        kind = doc.get("kind") if isinstance(doc, dict) else None
        self.assertIn(kind, LINE_KINDS, "a line of unknown kind: %r" % raw)
        errors = VALIDATOR.validate(doc, "bench/v2/%s.schema.json" % kind)
        self.assertEqual(errors, [], "%s line not valid against its schema: %s" % (kind, raw))
        return doc

    @staticmethod
    def kinds(docs):
        return [d["kind"] for d in docs]

    @staticmethod
    def of_kind(docs, kind):
        return [d for d in docs if d["kind"] == kind]
