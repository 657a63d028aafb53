"""scripts/demo_repo.sh: the two demo histories as generated, commit by commit.

The history is made with --history-only (nothing is built or measured: that is
the demo's own run, minutes long); the CUDA manifests are then
checked by perfwatch itself (PERFWATCH_BIN), which validates a manifest before it
builds anything. A kernel change that renames the tuning constant the demo flips
fails here, in CI, rather than on the first GPU machine that runs the demo.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO = os.path.join(ROOT, "scripts", "demo_repo.sh")
PERFWATCH = os.environ.get("PERFWATCH_BIN", "")


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def make_history(dest, backend):
    return subprocess.run(["sh", DEMO, "--backend", backend, "--history-only", dest], capture_output=True, text=True)


class History:
    """A generated history: commits oldest first, their files and diffs."""

    def __init__(self, repo):
        self.repo = repo
        self.shas = git(repo, "rev-list", "--reverse", "HEAD").split()

    def subject(self, i):
        return git(self.repo, "log", "-1", "--format=%s", self.shas[i])

    def message(self, i):
        return git(self.repo, "log", "-1", "--format=%B", self.shas[i])

    def files(self, i):
        return git(self.repo, "diff-tree", "--no-commit-id", "--name-only", "-r", self.shas[i]).split()

    def diff_lines(self, i, path):
        diff = git(self.repo, "show", "--format=", "-U0", self.shas[i], "--", path).splitlines()
        added = [l[1:] for l in diff if l.startswith("+") and not l.startswith("+++")]
        removed = [l[1:] for l in diff if l.startswith("-") and not l.startswith("---")]
        return added, removed

    def manifest(self, i):
        return json.loads(git(self.repo, "show", self.shas[i] + ":perfwatch.json"))

    def tree(self, i, path):
        return git(self.repo, "rev-parse", self.shas[i] + ":" + path).strip()


class CudaHistory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="demo-cuda-")
        made = make_history(os.path.join(cls.tmp, "demo"), "cuda")
        if made.returncode != 0:
            raise AssertionError("demo_repo.sh --backend cuda failed: " + made.stderr)
        cls.h = History(os.path.join(cls.tmp, "demo", "repo"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_six_commits_in_the_documented_order(self):
        subjects = [self.h.subject(i) for i in range(len(self.h.shas))]
        self.assertEqual(len(subjects), 6, subjects)
        self.assertIn("CUDA backend (baseline)", subjects[0])
        self.assertTrue(subjects[1].startswith("cuda: register-cap"), subjects[1])
        self.assertTrue(subjects[2].startswith('Revert "cuda: register-cap'), subjects[2])
        self.assertTrue(subjects[3].startswith("perfwatch.json: sweep bt32_w4_s2"), subjects[3])
        self.assertIn("comment only", subjects[4])
        self.assertTrue(subjects[5].startswith("docs:"), subjects[5])

    def test_the_baseline_sweeps_the_users_concurrencies_on_the_cuda_backend(self):
        m = self.h.manifest(0)
        self.assertEqual(m["schema_version"], 2)
        self.assertEqual(m["sweep"], {"axes": {"batch": [1, 8, 48, 64, 80, 96], "heads": [16], "topk": [2048], "dtype": ["bf16"]},
                                      "label": "C{batch}"})
        self.assertEqual(m["metric"], "time_us")
        self.assertEqual([x["name"] for x in m["metrics"]], ["time_us", "tokens_per_s", "bytes_per_s", "flops_per_s"])
        self.assertEqual(m["bench"]["backend"], "cuda")
        self.assertIn("PERFWATCH_CUDA=ON", m["build"]["command"])
        self.assertEqual([v["name"] for v in m["variants"]], ["bt16_w4_s2_tc240"])
        self.assertEqual(m["variants"][0]["params"], {"block_t": 16, "num_warps": 4, "num_stages": 2, "target_ctas": 240})
        self.assertTrue(m["variants"][0]["baseline"])
        # A few minutes for the whole watch on an H200: short trials, few runs.
        self.assertLessEqual(m["trials"]["budget_s"], 2)
        self.assertLessEqual(m["runs"]["max_per_commit"], 6)

    def test_the_slow_commit_flips_only_the_register_cap_and_says_why(self):
        self.assertEqual(self.h.files(1), ["kernels/cuda/cuda_tuning.h"])
        added, removed = self.h.diff_lines(1, "kernels/cuda/cuda_tuning.h")
        self.assertEqual(removed, ["inline constexpr int kBt16W4MinBlocks = 3;"])
        self.assertEqual(added, ["inline constexpr int kBt16W4MinBlocks = 4;"])
        message = self.h.message(1)
        self.assertIn("\nPerf-Hypothesis: ", message)
        self.assertIn("\nPerf-Experiment: cuda-bt16-min-blocks", message)

    def test_the_revert_restores_the_baseline_kernels(self):
        self.assertEqual(self.h.files(2), ["kernels/cuda/cuda_tuning.h"])
        self.assertEqual(self.h.tree(2, "kernels"), self.h.tree(0, "kernels"))

    def test_the_variant_commit_adds_bt32_at_the_same_target_ctas(self):
        self.assertEqual(self.h.files(3), ["perfwatch.json"])
        before, after = self.h.manifest(2), self.h.manifest(3)
        self.assertEqual(after["variants"][0], before["variants"][0])
        self.assertEqual(len(after["variants"]), 2)
        added = after["variants"][1]
        self.assertEqual(added["name"], "bt32_w4_s2_tc240")
        self.assertEqual(added["params"], {"block_t": 32, "num_warps": 4, "num_stages": 2, "target_ctas": 240})
        self.assertNotIn("baseline", added)
        self.assertTrue(added["hypothesis"])
        for key in ("sweep", "trials", "build", "bench", "runs"):
            self.assertEqual(after[key], before[key], key)

    def test_the_comment_commit_adds_comments_only(self):
        self.assertEqual(self.h.files(4), ["kernels/cuda/cuda_tuning.h"])
        added, removed = self.h.diff_lines(4, "kernels/cuda/cuda_tuning.h")
        self.assertEqual(removed, [])
        self.assertTrue(added)
        for line in added:
            self.assertTrue(line == "" or line.lstrip().startswith("//"), line)

    def test_the_docs_commit_touches_none_of_the_manifests_paths(self):
        files = self.h.files(5)
        self.assertEqual(files, ["README.md"])
        for path in self.h.manifest(5)["paths"]:
            self.assertFalse(any(f.startswith(path) for f in files), path)

    def test_the_knob_is_the_shipped_default(self):
        # The demo's baseline is today's kernel: the header it copies says 3,
        # and the kernel reads the constant (not a literal of its own).
        with open(os.path.join(ROOT, "kernels", "cuda", "cuda_tuning.h")) as f:
            self.assertIn("inline constexpr int kBt16W4MinBlocks = 3;", f.read())
        with open(os.path.join(ROOT, "kernels", "cuda", "split_kv_phases.cuh")) as f:
            self.assertIn("tuning::kBt16W4MinBlocks", f.read())

    @unittest.skipUnless(PERFWATCH, "PERFWATCH_BIN not set")
    def test_perfwatch_accepts_both_manifests(self):
        # perfwatch validates the manifest before the build; with the build a
        # no-op and a bench that exits at once, a valid manifest ends in exit
        # 1 (the bench failed), an invalid one in exit 2 naming the field.
        for i in (0, 3):
            m = self.h.manifest(i)
            m["build"]["command"] = "true"
            m["bench"]["command"] = "false"
            path = os.path.join(self.tmp, "manifest-%d.json" % i)
            with open(path, "w") as f:
                json.dump(m, f)
            run = subprocess.run([PERFWATCH, "--db", os.path.join(self.tmp, "check.db"), "bench", "--repo", self.h.repo,
                                  "--commit", self.h.shas[i], "--manifest", path], capture_output=True, text=True)
            self.assertEqual(run.returncode, 1, "commit %d: %s" % (i, run.stderr[-2000:]))


class CpuHistory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="demo-cpu-")
        made = make_history(os.path.join(cls.tmp, "demo"), "cpu")
        if made.returncode != 0:
            raise AssertionError("demo_repo.sh --backend cpu failed: " + made.stderr)
        cls.h = History(os.path.join(cls.tmp, "demo", "repo"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_five_commits_with_the_cpu_knob(self):
        self.assertEqual(len(self.h.shas), 5)
        m = self.h.manifest(0)
        self.assertEqual(m["bench"]["backend"], "cpu")
        self.assertEqual(m["sweep"]["axes"]["batch"], [1, 8, 48])
        self.assertEqual(m["bench"]["params"], {"threads": 1})
        self.assertEqual(self.h.files(1), ["kernels/src/cpu_tuning.h"])
        added, removed = self.h.diff_lines(1, "kernels/src/cpu_tuning.h")
        self.assertEqual(removed, ["inline constexpr int kMaxVectorFloats = 16;"])
        self.assertEqual(added, ["inline constexpr int kMaxVectorFloats = 4;"])
        self.assertIn("\nPerf-Hypothesis: ", self.h.message(1))
        self.assertEqual(self.h.tree(2, "kernels"), self.h.tree(0, "kernels"))
        self.assertEqual(self.h.files(3), ["kernels/README.md"])
        self.assertEqual(self.h.files(4), ["README.md"])

    def test_an_existing_repo_of_the_other_backend_is_refused(self):
        run = subprocess.run(["sh", DEMO, "--backend", "cuda", "--history-only", os.path.join(self.tmp, "demo")],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("holds the cpu history", run.stderr)
        self.assertEqual(len(History(self.h.repo).shas), 5)


class BackendChoice(unittest.TestCase):
    def run_demo(self, *args, **env):
        return subprocess.run(["sh", DEMO, *args], env=dict(os.environ, **env), capture_output=True, text=True)

    def test_forced_backends_are_printed(self):
        self.assertEqual(self.run_demo("--backend", "cuda", "--print-backend").stdout, "cuda\n")
        self.assertEqual(self.run_demo("--print-backend", PERFWATCH_DEMO_BACKEND="cpu").stdout, "cpu\n")

    def test_auto_without_a_gpu_is_cpu(self):
        # Neither nvcc nor nvidia-smi on the PATH (only what the script needs
        # to get that far): the CPU history.
        with tempfile.TemporaryDirectory() as bin_dir:
            os.symlink(shutil.which("dirname"), os.path.join(bin_dir, "dirname"))
            run = subprocess.run(["/bin/sh", DEMO, "--print-backend"], capture_output=True, text=True,
                                 env=dict(os.environ, PATH=bin_dir, PERFWATCH_DEMO_BACKEND="auto"))
        self.assertEqual(run.stdout, "cpu\n", run.stderr)

    def test_a_bad_backend_is_an_error(self):
        run = self.run_demo("--backend", "tpu", "--print-backend")
        self.assertEqual(run.returncode, 2)
        self.assertIn("auto, cpu or cuda", run.stderr)


if __name__ == "__main__":
    unittest.main()
