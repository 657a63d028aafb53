"""The kit's driver (kit/drive_bench.py), its schema validator, and the examples: the manifests
are valid version 2 manifests that make valid plans, the CPU example runs end to end through
the driver, and its history script plants the slowdown where it says."""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from kit_support import KIT, ROOT, SCHEMAS, VALIDATOR, drive_bench

EXAMPLES = os.path.join(ROOT, "examples")
MANIFESTS = [os.path.join(EXAMPLES, "python_cpu", "perfwatch.json"),
             os.path.join(EXAMPLES, "triton_mla", "perfwatch.json"),
             os.path.join(EXAMPLES, "triton_mla", "perfwatch.check.json")]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class ValidatorTest(unittest.TestCase):
    """The validator must reject what the schemas forbid, or the other tests prove nothing."""

    TRIAL = {"kind": "trial", "variant": "v", "point": "C48", "trial": 1, "metrics": {"time_us": 3.5},
             "steps": 10, "clock_mhz": None}

    def errors(self, doc, schema="bench/v2/trial.schema.json"):
        return VALIDATOR.validate(doc, schema)

    def test_a_valid_trial(self):
        self.assertEqual(self.errors(self.TRIAL), [])

    def test_unknown_field(self):
        doc = dict(self.TRIAL, time_us=3.5)
        self.assertTrue(any("unknown field time_us" in e for e in self.errors(doc)))

    def test_metric_values_must_be_positive(self):
        doc = dict(self.TRIAL, metrics={"time_us": 0})
        self.assertTrue(any("/metrics/time_us" in e and "> 0" in e for e in self.errors(doc)))

    def test_missing_required_and_wrong_const(self):
        doc = dict(self.TRIAL, kind="trail")
        del doc["metrics"]
        errors = self.errors(doc)
        self.assertTrue(any("missing required field metrics" in e for e in errors))
        self.assertTrue(any("/kind" in e for e in errors))

    def test_point_id_without_control_characters(self):
        self.assertTrue(self.errors(dict(self.TRIAL, point="C48\n")))
        self.assertTrue(self.errors(dict(self.TRIAL, point="")))

    def test_booleans_are_not_integers(self):
        self.assertTrue(self.errors(dict(self.TRIAL, trial=True)))

    def test_integer_and_string_axis_values(self):
        point = {"id": "C48", "axes": {"batch": 48, "dtype": "bf16", "ratio": 0.5}}
        self.assertEqual(self._point_errors(point), [])  # an integer is also a number: anyOf, not oneOf
        self.assertTrue(self._point_errors({"id": "x", "axes": {"batch": [48]}}))
        self.assertTrue(self._point_errors({"id": "x", "axes": {}}))

    def _point_errors(self, point):
        plan = {"kind": "plan", "schema_version": 2, "variants": [{"name": "v", "params": {}}], "points": [point],
                "metrics": [{"name": "time_us", "unit": "us", "direction": "lower_is_better"}],
                "judged_metric": "time_us"}
        return VALIDATOR.validate(plan, "bench/v2/plan.schema.json")

    def test_if_then_requires_a_reason(self):
        check = {"kind": "check", "variant": "v", "point": "p", "status": "incorrect"}
        self.assertTrue(any("reason" in e for e in VALIDATOR.validate(check, "bench/v2/check.schema.json")))
        check["reason"] = "rel_l2_o 0.5 exceeds the tolerance 0.01"
        self.assertEqual(VALIDATOR.validate(check, "bench/v2/check.schema.json"), [])

    def test_an_unknown_keyword_is_refused_not_ignored(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(tmp, "x.schema.json"), "w") as f:
            json.dump({"$id": "x.schema.json", "type": "object", "dependentRequired": {}}, f)
        with self.assertRaises(drive_bench.SchemaError):
            drive_bench.SchemaValidator(tmp).validate({}, "x.schema.json")


class ManifestTest(unittest.TestCase):
    def test_example_manifests_are_valid_and_make_valid_plans(self):
        for path in MANIFESTS:
            with self.subTest(manifest=os.path.relpath(path, ROOT)):
                manifest = load(path)
                self.assertEqual(VALIDATOR.validate(manifest, "manifest.v2.schema.json"), [])
                plan = drive_bench.plan_from_manifest(manifest, seed=5)
                self.assertEqual(VALIDATOR.validate(plan, "bench/v2/plan.schema.json"), [])
                self.assertEqual(plan["judged_metric"], manifest.get("metric", manifest["metrics"][0]["name"]))
                self.assertEqual(len({p["id"] for p in plan["points"]}), len(plan["points"]))

    def test_triton_manifest_is_the_users_sweep(self):
        plan = drive_bench.plan_from_manifest(load(MANIFESTS[1]))
        self.assertEqual([p["id"] for p in plan["points"]], ["C1", "C8", "C48", "C64", "C80", "C96"])
        self.assertEqual(plan["points"][2]["axes"], {"batch": 48, "heads": 16, "topk": 2048})
        self.assertEqual(plan["judged_metric"], "tokens_per_s")
        directions = {m["name"]: m["direction"] for m in plan["metrics"]}
        self.assertEqual(directions, {"tokens_per_s": "higher_is_better", "time_us": "lower_is_better"})
        for v in plan["variants"]:
            self.assertEqual(set(v["params"]), {"block_t", "num_warps", "num_stages", "target_ctas"})

    def test_points_first_axis_fastest_and_default_labels(self):
        manifest = copy.deepcopy(load(MANIFESTS[0]))
        manifest["sweep"] = {"axes": {"seq_len": [64, 256], "heads": [1, 2], "dim": [32]}}
        ids = [p["id"] for p in drive_bench.plan_from_manifest(manifest)["points"]]
        self.assertEqual(ids, ["seq_len=64,heads=1", "seq_len=256,heads=1", "seq_len=64,heads=2",
                               "seq_len=256,heads=2"])
        manifest["sweep"]["label"] = "N{seq_len}"
        with self.assertRaises(drive_bench.ManifestError):  # two points per label
            drive_bench.plan_from_manifest(manifest)
        manifest["sweep"]["label"] = "N{seq_len}_{nope}"
        with self.assertRaises(drive_bench.ManifestError):
            drive_bench.plan_from_manifest(manifest)


class DriverTest(unittest.TestCase):
    """The driver must catch a bench that breaks the protocol, or its passes prove nothing."""

    PLAN = drive_bench.plan_from_manifest(load(MANIFESTS[0]))

    def drive(self, script):
        return drive_bench.drive([sys.executable, "-c", script], self.PLAN, trials=1, schemas=SCHEMAS,
                                 idle_timeout_s=60, stderr=subprocess.DEVNULL)

    def test_not_json_and_not_a_header(self):
        run = self.drive("print(1)")
        self.assertFalse(run.ok())
        self.assertIn("not a JSON object: '1'", run.violations[0])

    def test_a_line_that_breaks_its_schema(self):
        run = self.drive("import sys; sys.stdin.readline(); "
                         "print('{\"kind\": \"header\", \"schema_version\": 1}')")
        self.assertFalse(run.ok())
        self.assertTrue(any(v.startswith("header line: /schema_version") for v in run.violations), run.violations)

    def test_an_error_line_then_exit_zero(self):
        run = self.drive("import sys; sys.stdin.readline(); "
                         "print('{\"kind\": \"error\", \"where\": \"plan\", \"message\": \"boom\"}')")
        self.assertFalse(run.ok())
        self.assertEqual(run.error["message"], "boom")
        self.assertIn("an error line, then exit code 0", run.violations)


class CpuExampleTest(unittest.TestCase):
    """examples/python_cpu through the driver, as perfwatch's runner will run it."""

    def drive(self, repo, *extra):
        out = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, out)
        summary = os.path.join(out, "summary.json")
        p = subprocess.run([sys.executable, os.path.join(KIT, "drive_bench.py"), "--manifest",
                            os.path.join(repo, "perfwatch.json"), "--repo", repo, "--trials", "2", "--quiet",
                            "--schemas", SCHEMAS, "--summary", summary, *extra],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        return load(summary)

    def check_summary(self, summary):
        self.assertTrue(summary["ok"])
        self.assertEqual(summary["violations"], [])
        self.assertEqual(summary["header"]["timer"], "wall_clock")
        self.assertEqual(len(summary["cells"]), 6)
        for cell in summary["cells"]:
            self.assertEqual(cell["check"], "ok", cell)
            self.assertEqual(cell["trials"], 2)
            self.assertGreater(cell["metrics"]["keys_per_s"]["median"], 0)
            self.assertGreater(cell["metrics"]["time_us"]["median"], 0)
            self.assertLess(cell["errors"]["rel_l2"], 1e-12)

    def test_the_example_in_place(self):
        self.check_summary(self.drive(os.path.join(EXAMPLES, "python_cpu")))

    def test_history_with_a_planted_slowdown(self):
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        repo = os.path.join(tmp, "repo")
        p = subprocess.run(["bash", os.path.join(EXAMPLES, "python_cpu", "make_history.sh"), repo],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        steps = dict(line.split() for line in p.stdout.splitlines())
        self.assertEqual(list(steps), ["baseline", "docs", "slowdown", "comment"])

        def git(*args):
            return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout

        self.assertEqual(git("rev-list", "--count", "HEAD").strip(), "4")
        self.assertEqual(git("rev-parse", "HEAD").strip(), steps["comment"])
        paths = load(os.path.join(repo, "perfwatch.json"))["paths"]
        changed = {step: git("diff-tree", "--no-commit-id", "--name-only", "-r", sha).split()
                   for step, sha in steps.items() if step != "baseline"}
        self.assertEqual(changed["docs"], ["README.md"])
        self.assertNotIn("README.md", paths)  # so perfwatch inherits the baseline's results there
        self.assertEqual(changed["slowdown"], ["attention.py"])
        self.assertIn("math.fsum", git("show", steps["slowdown"]))
        self.assertEqual(changed["comment"], ["bench.py"])
        # The repo is self-contained (the kit vendored) and the slowed commit is still correct.
        self.check_summary(self.drive(repo))
        git("checkout", "-q", steps["docs"])
        self.check_summary(self.drive(repo))


if __name__ == "__main__":
    unittest.main()
