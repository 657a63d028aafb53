"""The kit (kit/perfwatch_bench.py) speaks bench protocol version 2: a pure-Python bench built
with it (toy_bench.py) is run as a subprocess, fed plans and measure requests, and every line it
writes is validated against schemas/bench/v2/. No GPU, no PyTorch."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from kit_support import (BYTES_PER_S, CPU_TIME_US, ITEMS_PER_S, TIME_US, TOY, BenchTestCase, drive_bench, make_plan,
                          measure)


class FullRunTest(BenchTestCase):
    """One run with every kind of variant, two points, two trials a request."""

    VARIANTS = ("good", "slow", "wrong", "raises", "oom", "build_infeasible", "build_raises", "describe_infeasible")

    @classmethod
    def setUpClass(cls):
        plan = make_plan(variants=cls.VARIANTS, points=(200, 400),
                         metrics=(TIME_US, ITEMS_PER_S, BYTES_PER_S, CPU_TIME_US))
        requests = [measure(v, p, 2) for p in ("n200", "n400") for v in cls.VARIANTS]
        requests.append(measure("good", "n200", 1))  # a second request for a cell: no second check
        cls.case = BenchTestCase()
        cls.rc, cls.docs, cls.stderr = cls.case.run_bench([plan] + requests)

    def cell(self, kind, variant, point="n200"):
        return [d for d in self.docs if d["kind"] == kind and d.get("variant") == variant and d.get("point") == point]

    def test_exits_zero_with_header_first_and_footer_last(self):
        self.assertEqual(self.rc, 0, self.stderr[-2000:])
        self.assertEqual(self.docs[0]["kind"], "header")
        self.assertEqual(self.docs[-1]["kind"], "footer")
        self.assertEqual(self.docs[-1]["trials"], len(self.of_kind(self.docs, "trial")))

    def test_one_variant_line_per_variant_in_plan_order(self):
        lines = self.of_kind(self.docs, "variant")
        self.assertEqual([d["variant"] for d in lines], list(self.VARIANTS))
        self.assertEqual(self.kinds(self.docs)[1:1 + len(self.VARIANTS)], ["variant"] * len(self.VARIANTS))
        by_name = {d["variant"]: d for d in lines}
        self.assertEqual(by_name["describe_infeasible"]["status"], "infeasible")
        self.assertEqual(by_name["describe_infeasible"]["reason"], "needs 1 TB of shared memory")
        self.assertEqual(by_name["good"]["status"], "ok")
        self.assertEqual(by_name["good"]["resources"], {"mode": "good"})

    def test_wall_clock_timer_is_declared(self):
        header = self.docs[0]
        self.assertEqual(header["timer"], "wall_clock")
        self.assertEqual(header["backend"], "cpu")
        self.assertIn("perf_counter_ns", header["timer_note"])
        self.assertIn("no GPU", header["timer_note"])
        self.assertIn("PyTorch", header["backend_reason"])
        self.assertEqual(header["schema_version"], 2)
        self.assertTrue(header["build"]["binary_hash"].startswith("sha256:"))
        self.assertIn("toy_bench.py", header["build"]["id"])
        self.assertIn("perfwatch_bench.py", header["build"]["id"])
        self.assertEqual(header["bench"], "toy_bench 3 (perfwatch_bench.py 1)")
        self.assertIn("python", header["software"])

    def test_check_comes_once_before_the_first_trial(self):
        for point in ("n200", "n400"):
            answers = [d["kind"] for d in self.docs if d.get("variant") == "good" and d.get("point") == point]
            self.assertEqual(answers[0], "check")
            self.assertEqual(answers.count("check"), 1)
            self.assertTrue(all(k == "trial" for k in answers[1:]))
        self.assertEqual([d["trial"] for d in self.cell("trial", "good")], [1, 2, 3])

    def test_good_variants_are_ok_with_errors_and_tolerance_by_name(self):
        for variant in ("good", "slow"):
            check = self.cell("check", variant)[0]
            self.assertEqual(check["status"], "ok")
            self.assertEqual(check["tolerance"], {"rel_l2": 1e-9})
            self.assertEqual(check["errors"]["rel_l2"], 0.0)
            self.assertIn("max_abs", check["errors"])
            self.assertTrue(check["detail"]["timing"].startswith("wall_clock"))

    def test_metrics_present_positive_and_consistent(self):
        trials = self.of_kind(self.docs, "trial")
        self.assertTrue(trials)
        for t in trials:
            m = t["metrics"]
            self.assertEqual(set(m), {"time_us", "items_per_s", "bytes_per_s", "cpu_time_us"})
            self.assertTrue(all(v > 0 for v in m.values()))
            n = int(t["point"][1:])
            self.assertAlmostEqual(m["items_per_s"] * m["time_us"] * 1e-6, n, delta=n * 1e-9)
            self.assertAlmostEqual(m["bytes_per_s"] / m["items_per_s"], 8.0, places=9)
            self.assertGreaterEqual(t["steps"], 1)

    def test_clock_fields_null_without_a_gpu(self):
        for t in self.of_kind(self.docs, "trial"):
            self.assertIn("clock_mhz", t)
            self.assertIsNone(t["clock_mhz"])
            self.assertNotIn("throttled", t)

    def test_incorrect_output_is_not_timed(self):
        check = self.cell("check", "wrong")[0]
        self.assertEqual(check["status"], "incorrect")
        self.assertIn("rel_l2", check["reason"])
        self.assertIn("exceeds the tolerance", check["reason"])
        self.assertGreater(check["errors"]["rel_l2"], 1e-9)
        self.assertEqual(check["tolerance"], {"rel_l2": 1e-9})
        self.assertEqual(self.cell("trial", "wrong"), [])
        skipped = self.cell("skipped", "wrong")
        self.assertEqual(len(skipped), 1)
        self.assertEqual(skipped[0]["status"], "incorrect")

    def test_exception_in_a_variant_is_that_cell_incorrect(self):
        check = self.cell("check", "raises")[0]
        self.assertEqual(check["status"], "incorrect")
        self.assertIn("ValueError: bad value in the kernel", check["reason"])
        self.assertEqual(self.cell("skipped", "raises")[0]["status"], "incorrect")
        # ... and the run went on: the next variants and the next point were answered.
        self.assertEqual(self.cell("check", "slow", "n400")[0]["status"], "ok")

    def test_out_of_memory_and_failed_builds_are_infeasible(self):
        self.assertIn("out of resources: MemoryError", self.cell("check", "oom")[0]["reason"])
        self.assertEqual(self.cell("check", "build_infeasible")[0]["reason"], "needs more than 200 items")
        self.assertIn("build raised RuntimeError: cannot build", self.cell("check", "build_raises")[0]["reason"])
        self.assertIn("the variant cannot run here", self.cell("check", "describe_infeasible")[0]["reason"])
        for variant in ("oom", "build_infeasible", "build_raises", "describe_infeasible"):
            self.assertEqual(self.cell("check", variant)[0]["status"], "infeasible")
            self.assertEqual(self.cell("skipped", variant)[0]["status"], "infeasible")
            self.assertEqual(self.cell("trial", variant), [])


class PlanErrorTest(BenchTestCase):
    """A bad plan or request: one error line naming the field, nothing after it, a non-zero exit."""

    def expect_error(self, lines, where, code=2, message=None):
        rc, docs, stderr = self.run_bench(lines)
        self.assertEqual(rc, code, stderr[-2000:])
        self.assertEqual(docs[-1]["kind"], "error", docs)
        self.assertEqual(docs[-1]["where"], where)
        if message:
            self.assertIn(message, docs[-1]["message"])
        self.assertNotIn("footer", self.kinds(docs))
        return docs

    def test_empty_stdin(self):
        self.expect_error([], "stdin", message="no plan")

    def test_not_json(self):
        self.expect_error(["{not json"], "plan", message="not JSON")

    def test_not_a_plan(self):
        self.expect_error([measure("good", "n200")], "kind", message='"kind": "plan"')

    def test_protocol_version_1(self):
        self.expect_error([make_plan(schema_version=1)], "schema_version", message="version 2 only")

    def test_missing_and_empty_fields(self):
        plan = make_plan()
        del plan["points"]
        self.expect_error([plan], "points", message="missing")
        self.expect_error([make_plan(variants=())], "variants", message="non-empty")

    def test_unknown_field(self):
        self.expect_error([make_plan(check={"max_rel_l2_o": 0.01})], "check", message="unknown field")

    def test_duplicate_variant(self):
        self.expect_error([make_plan(variants=("good", "good"))], "variants[1].name", message="twice")

    def test_bad_axis_value(self):
        plan = make_plan()
        plan["points"][0]["axes"]["n"] = [1, 2]
        self.expect_error([plan], "points[0].axes.n")

    def test_judged_metric_not_declared(self):
        self.expect_error([make_plan(judged="tokens_per_s")], "judged_metric", message="not one of the declared")

    def test_judged_metric_the_bench_cannot_compute(self):
        flops = {"name": "flops_per_s", "unit": "FLOP/s", "direction": "higher_is_better"}
        self.expect_error([make_plan(metrics=(flops,), judged="flops_per_s")], "judged_metric",
                          message='work(axes)["flops"]')

    def test_bad_timing(self):
        self.expect_error([make_plan(timing={"min_trial_ms": 0})], "timing.min_trial_ms")

    def test_unknown_backend(self):
        self.expect_error([make_plan(backend="tpu")], "backend", message="auto, cpu and cuda")

    def test_tolerance_must_be_numbers(self):
        self.expect_error([make_plan(params={"tolerance": {"rel_l2": "small"}})], "params.tolerance.rel_l2")

    def test_bad_measure_request_after_good_lines(self):
        docs = self.expect_error([make_plan(), measure("good", "n200"), measure("good", "n200", 0)],
                                 "line 3.trials", message="1 to 10000")
        self.assertIn("trial", self.kinds(docs))  # what came before the bad line was answered

    def test_measure_that_is_not_json(self):
        self.expect_error([make_plan(), "measure good n200"], "line 2", message="not JSON")

    @unittest.skipIf(importlib.util.find_spec("torch") is not None, "PyTorch is installed: there may be a GPU")
    def test_cuda_backend_without_a_gpu(self):
        self.expect_error([make_plan(backend="cuda")], "backend", code=1, message="no usable CUDA device")


class RequestTest(BenchTestCase):
    def test_unknown_variant_and_point_are_skipped(self):
        rc, docs, _ = self.run_bench([make_plan(), measure("nope", "n200"), measure("good", "n999")])
        self.assertEqual(rc, 0)
        skipped = self.of_kind(docs, "skipped")
        self.assertEqual([s["status"] for s in skipped], ["unknown", "unknown"])
        self.assertIn('no variant named "nope"', skipped[0]["reason"])
        self.assertIn('no point with id "n999"', skipped[1]["reason"])
        self.assertEqual(self.of_kind(docs, "check"), [])

    def test_tolerance_comes_from_the_plan_params(self):
        rc, docs, _ = self.run_bench([make_plan(variants=("wrong",), params={"tolerance": {"rel_l2": 0.01}}),
                                      measure("wrong", "n200", 2)])
        self.assertEqual(rc, 0)
        check = self.of_kind(docs, "check")[0]
        self.assertEqual(check["status"], "ok")
        self.assertEqual(check["tolerance"], {"rel_l2": 0.01})
        self.assertEqual(len(self.of_kind(docs, "trial")), 2)

    def test_a_tolerance_compare_does_not_report_is_an_error(self):
        rc, docs, _ = self.run_bench([make_plan(params={"tolerance": {"rel_l2_o": 0.01}}), measure("good", "n200")])
        self.assertEqual(rc, 1)
        self.assertEqual(docs[-1]["kind"], "error")
        self.assertEqual(docs[-1]["where"], "params.tolerance.rel_l2_o")

    def test_prints_on_stdout_do_not_break_the_protocol(self):
        rc, docs, stderr = self.run_bench([make_plan(variants=("chatty",)), measure("chatty", "n200", 3)])
        self.assertEqual(rc, 0)  # run_bench already validated every stdout line
        self.assertEqual(len(self.of_kind(docs, "trial")), 3)
        self.assertIn("a kernel that prints to stdout", stderr)
        self.assertIn("and writes to fd 1", stderr)

    def test_exception_while_warming_up_fails_only_that_cell(self):
        rc, docs, _ = self.run_bench([make_plan(variants=("fails_in_rotation", "good")),
                                      measure("fails_in_rotation", "n200"), measure("good", "n200"),
                                      measure("fails_in_rotation", "n200")])
        self.assertEqual(rc, 0)
        check = [d for d in docs if d["kind"] == "check" and d["variant"] == "fails_in_rotation"][0]
        self.assertEqual(check["status"], "incorrect")
        self.assertIn("raised while warming up: KeyError", check["reason"])
        skipped = [d for d in docs if d["kind"] == "skipped"]
        self.assertEqual(len(skipped), 2)
        self.assertEqual(len(self.of_kind(docs, "trial")), 1)

    def test_exception_in_a_later_trial_keeps_the_trials_before(self):
        """The cell passes its check and is timed; then its call starts raising (a trigger file
        the test creates between two requests): that request is answered with skipped, the
        trials before stand, and the run goes on."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        trigger = os.path.join(tmp, "trigger")
        proc = subprocess.Popen([sys.executable, TOY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, bufsize=1)
        reader = drive_bench._Reader(proc.stdout)

        def send(obj):
            proc.stdin.write(json.dumps(obj) + "\n")
            proc.stdin.flush()

        def read():
            raw = reader.next(60)
            self.assertIsNotNone(raw, "the bench closed stdout early")
            return self.valid_line(raw)

        try:
            send(make_plan(variants=("fails_on_trigger", "good"), params={"trigger_file": trigger}))
            self.assertEqual([read()["kind"] for _ in range(3)], ["header", "variant", "variant"])
            send(measure("fails_on_trigger", "n200", 2))
            self.assertEqual([read()["kind"] for _ in range(3)], ["check", "trial", "trial"])
            open(trigger, "w").close()
            send(measure("fails_on_trigger", "n200", 2))
            skipped = read()
            self.assertEqual(skipped["kind"], "skipped")
            self.assertEqual(skipped["status"], "incorrect")
            self.assertIn("raised while timed: ZeroDivisionError", skipped["reason"])
            send(measure("fails_on_trigger", "n200", 1))
            self.assertEqual(read()["kind"], "skipped")
            send(measure("good", "n200", 1))
            self.assertEqual([read()["kind"] for _ in range(2)], ["check", "trial"])
            proc.stdin.close()
            footer = read()
            self.assertEqual(footer["kind"], "footer")
            self.assertEqual(footer["trials"], 3)
            self.assertEqual(proc.wait(timeout=60), 0)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()

    def test_cache_flush_instead_of_rotation(self):
        rc, docs, _ = self.run_bench([make_plan(), measure("good", "n200", 2)], env={"TOY_COLD": "flush"})
        self.assertEqual(rc, 0)
        self.assertIn("the cache flushed before it", docs[0]["timer_note"])
        check = self.of_kind(docs, "check")[0]
        self.assertEqual(check["detail"]["input_sets"], 1)
        self.assertIn("flushed before each call", check["detail"]["rotation"])
        self.assertTrue(check["detail"]["timing"].startswith("wall_clock_flushed"))
        self.assertEqual(len(self.of_kind(docs, "trial")), 2)

    def test_input_rotation_is_sized_from_work_bytes(self):
        rc, docs, _ = self.run_bench([make_plan(), measure("good", "n200")])
        self.assertEqual(rc, 0)
        detail = self.of_kind(docs, "check")[0]["detail"]
        # 1600 bytes a call against a cache of megabytes: the rotation is capped at max_sets.
        self.assertEqual(detail["input_sets"], 64)
        self.assertIn("64 sets of", detail["rotation"])

    def test_seed_from_the_plan_is_reported(self):
        rc, docs, _ = self.run_bench([make_plan(seed=42)])
        self.assertEqual(rc, 0)
        self.assertEqual(docs[0]["seed"], 42)
        self.assertEqual(self.kinds(docs), ["header", "variant", "footer"])
        self.assertEqual(docs[-1]["trials"], 0)


class CommandLineTest(BenchTestCase):
    def test_help_and_version(self):
        help_text = subprocess.run([sys.executable, TOY, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(help_text.returncode, 0)
        self.assertIn("measure requests", help_text.stdout)
        version = subprocess.run([sys.executable, TOY, "--version"], capture_output=True, text=True, timeout=60)
        self.assertEqual(version.returncode, 0)
        self.assertIn("bench protocol version 2", version.stdout)
        bad = subprocess.run([sys.executable, TOY, "--frobnicate"], capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 2)

    def test_build_id_follows_the_sources_not_the_checkout(self):
        def build_id(folder):
            out = subprocess.run([sys.executable, os.path.join(folder, "toy_bench.py"), "--version"],
                                 capture_output=True, text=True, timeout=60).stdout
            return [line for line in out.splitlines() if line.startswith("build:")][0]

        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        kit_src = os.path.join(os.path.dirname(TOY), "..", "..", "kit", "perfwatch_bench.py")
        ids = []
        for name in ("a", "b"):
            folder = os.path.join(tmp, name, "tests", "kit")
            os.makedirs(folder)
            os.makedirs(os.path.join(tmp, name, "kit"))
            shutil.copy(TOY, folder)
            shutil.copy(kit_src, os.path.join(tmp, name, "kit"))
            ids.append(build_id(folder))
        self.assertEqual(ids[0], ids[1])  # same sources at another path: same build
        with open(os.path.join(tmp, "b", "tests", "kit", "toy_bench.py"), "a") as f:
            f.write("# a change\n")
        self.assertNotEqual(build_id(os.path.join(tmp, "b", "tests", "kit")), ids[0])


if __name__ == "__main__":
    unittest.main()
