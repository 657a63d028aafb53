"""The GPU tooling that can be tested without a GPU: scripts/gpu/e2e.sh refuses
bad calls before it touches anything, and a database turns into the committed
artefacts (scripts/demo_summary.sh, scripts/gpu/screenshot.mjs through
scripts/gpu/artefacts.sh) -- here on the web tests' fixture database
(PERFWATCH_FIXTURE_BIN), the screenshot where chromium and playwright-core are
(PERFWATCH_CHROMIUM). A whole e2e.sh run is minutes long: `e2e.sh --cpu`, by hand.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
E2E = os.path.join(ROOT, "scripts", "gpu", "e2e.sh")
PERFWATCH = os.environ.get("PERFWATCH_BIN", "")
FIXTURE = os.environ.get("PERFWATCH_FIXTURE_BIN", "")
CHROMIUM = os.environ.get("PERFWATCH_CHROMIUM", "")
HAVE_BROWSER = bool(CHROMIUM and os.path.exists(CHROMIUM) and shutil.which("node")
                    and os.path.isdir(os.path.join(ROOT, "web", "node_modules", "playwright-core")))


class E2eArguments(unittest.TestCase):
    def e2e(self, *args):
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run(["bash", E2E, *args], capture_output=True, text=True,
                                 env=dict(os.environ, OUT=out, E2E_WORK=os.path.join(out, "work")))
            return run, sorted(os.listdir(out))

    def test_bad_calls_exit_2_and_leave_nothing(self):
        cases = {
            (): "name at least one phase",
            ("demo", "bogus"): "unknown phase or option 'bogus'",
            ("demo", "noise", "triton", "demo"): "at most 3 phases",
            ("noise", "noise=4"): "phase noise named twice",
            ("--deadline-s", "soon", "demo"): "--deadline-s needs a number",
        }
        for args, said in cases.items():
            run, left = self.e2e(*args)
            self.assertEqual(run.returncode, 2, args)
            self.assertIn(said, run.stderr, args)
            self.assertEqual(left, [], args)

    def test_help_names_every_phase(self):
        run, _ = self.e2e("--help")
        self.assertEqual(run.returncode, 0)
        for word in ("demo", "noise[=K]", "triton", "--cpu", "--deadline-s"):
            self.assertIn(word, run.stdout)


@unittest.skipUnless(PERFWATCH and FIXTURE, "PERFWATCH_BIN and PERFWATCH_FIXTURE_BIN not set")
class Artefacts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="artefacts-")
        cls.db = os.path.join(cls.tmp, "fixture.db")
        cls.info = json.loads(subprocess.run([FIXTURE, cls.db], check=True, capture_output=True, text=True).stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_summary_of_a_database_from_elsewhere(self):
        # No repo path: a database brought back names a path of another machine.
        run = subprocess.run(["sh", os.path.join(ROOT, "scripts", "demo_summary.sh"), self.db, "", "cuda"],
                             capture_output=True, text=True, env=dict(os.environ, PERFWATCH=PERFWATCH))
        self.assertEqual(run.returncode, 0, run.stderr)
        for heading in ("== commits and their runs ==", "== the newest run's table", "== flags ==",
                        "== negative results (rejected experiments) ==", "== every experiment, one line each"):
            self.assertIn(heading, run.stdout)
        self.assertIn(self.info["regression_sha"][:10], run.stdout)
        self.assertIn("REJECTED", run.stdout)
        self.assertIn("perfwatch serve --db", run.stdout)

    def test_the_summary_with_the_repo_named(self):
        # As scripts/demo_repo.sh asks for it: every command with --repo after
        # its flags (`flags --all --repo R` once read R as a mistyped command).
        # A copy whose repo is a folder of this machine (the fixture's is not).
        db = os.path.join(self.tmp, "named.db")
        shutil.copyfile(self.db, db)
        repo = os.path.join(self.tmp, "repo")
        os.makedirs(repo, exist_ok=True)
        with sqlite3.connect(db) as c:
            c.execute("UPDATE repos SET path = ?", (repo,))
        run = subprocess.run(["sh", os.path.join(ROOT, "scripts", "demo_summary.sh"), db, repo, "cuda"],
                             capture_output=True, text=True, env=dict(os.environ, PERFWATCH=PERFWATCH))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertNotIn("unknown command", run.stderr)
        self.assertIn(self.info["regression_sha"][:10], run.stdout)
        self.assertIn("REJECTED", run.stdout)

    @unittest.skipUnless(HAVE_BROWSER, "needs node, chromium (PERFWATCH_CHROMIUM) and web/node_modules/playwright-core")
    def test_artefacts_write_the_summary_and_a_drawn_chart(self):
        out = os.path.join(self.tmp, "artefacts")
        with open(self.db, "rb") as f:
            before = f.read()
        run = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu", "artefacts.sh"), self.db, out, "cuda"],
                             capture_output=True, text=True, timeout=180,
                             env=dict(os.environ, PERFWATCH=PERFWATCH, CHROMIUM=CHROMIUM))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        # The baseline variant, at the point of its largest flagged change.
        self.assertIn("history of " + self.info["baseline_variant"] + " at ", run.stdout)
        with open(os.path.join(out, "history.png"), "rb") as f:
            png = f.read()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(png), 20000)  # a chart, its notes and the flagged table, not a blank page
        with open(os.path.join(out, "summary.txt")) as f:
            self.assertIn("== flags ==", f.read())
        with open(self.db, "rb") as f:
            self.assertEqual(f.read(), before, "the database brought back is left as it came")

    @unittest.skipUnless(HAVE_BROWSER, "needs node, chromium (PERFWATCH_CHROMIUM) and web/node_modules/playwright-core")
    def test_screenshot_refuses_an_unknown_variant(self):
        run = subprocess.run(["node", os.path.join(ROOT, "scripts", "gpu", "screenshot.mjs"), "--perfwatch", PERFWATCH,
                              "--db", self.db, "--out", os.path.join(self.tmp, "x.png"), "--chromium", CHROMIUM,
                              "--variant", "no_such_variant"], capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 1)
        self.assertIn("no variant no_such_variant", run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.png")))


if __name__ == "__main__":
    unittest.main()
