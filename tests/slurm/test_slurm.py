"""The slurm executor against a real Slurm: a single-node cluster on this
machine (cluster.sh: munged, slurmctld and slurmd, two partitions standing
for two kinds of GPU node), `perfwatch watch` dispatching a small history
through it as Slurm jobs -- builds and benches -- on both testbeds at once,
one bench job cancelled mid-run (scancel, as a preemption or a node failure
ends a job) and re-queued, and Slurm stopped afterwards.

Needs root and Debian's slurm-wlm and munge (scripts/setup.sh installs
them); PERFWATCH_BIN and FAKE_BENCH name the binaries (CTest sets them).
The executor config it uses is docs' config (examples/executors/slurm.json)
with this cluster's partitions.
"""
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PERFWATCH = os.environ.get("PERFWATCH_BIN", str(ROOT / "build" / "perfwatch"))
FAKE_BENCH = os.environ.get("FAKE_BENCH", str(ROOT / "build" / "tests" / "runner" / "fake_bench"))


def run(args, **kw):
    return subprocess.run(args, check=True, text=True, capture_output=True, **kw)


class Cluster:
    def __init__(self, root):
        self.dir = Path(root) / "slurm"
        self.env = dict(os.environ, SLURM_CONF=str(self.dir / "etc" / "slurm.conf"))

    def start(self):
        out = subprocess.run([str(HERE / "cluster.sh"), "start", str(self.dir)], text=True, capture_output=True)
        if out.returncode != 0:
            raise RuntimeError("cluster.sh start failed:\n" + out.stdout + out.stderr)

    def stop(self):
        subprocess.run([str(HERE / "cluster.sh"), "stop", str(self.dir)], text=True, capture_output=True)

    def running_bench_jobs(self):
        out = run(["squeue", "-h", "-t", "RUNNING", "-o", "%i %j %P %M"], env=self.env).stdout
        jobs = []
        for line in out.splitlines():
            job_id, name, partition, _ = line.split(None, 3)
            if name.startswith("perfwatch-run-"):
                jobs.append((job_id, name, partition))
        return jobs


def git(repo, *args):
    return run(["git", "-C", str(repo), *args],
               env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
                        GIT_COMMITTER_EMAIL="t@x")).stdout.strip()


def manifest(slow=None):
    env = {"FAKE_BENCH_TRIAL_MS": "60"}
    if slow:
        env["FAKE_BENCH_SLOW"] = slow
    return {
        "schema_version": 1,
        "build": {"command": "echo built on $(hostname) in job $SLURM_JOB_ID"},
        "paths": ["src/", "perfwatch.json"],
        "bench": {"command": FAKE_BENCH, "timeout_s": 120, "idle_timeout_s": 60, "env": env},
        "variants": [{"name": "base", "baseline": True, "params": {"block_t": 32}},
                     {"name": "w8", "params": {"block_t": 32, "num_warps": 8}}],
        "sweep": {"batch": [1, 8]},
        "trials": {"min": 3, "max": 4, "target_rel_ci": 0.5, "budget_s": 30},
        "runs": {"per_commit": 3, "max_per_commit": 6},
    }


class SlurmExecutor(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.fail("the Slurm test starts slurmctld and slurmd: run it as root (CI does)")
        self.tmp = tempfile.TemporaryDirectory(prefix="perfwatch-slurm-")
        self.root = Path(self.tmp.name)
        self.cluster = Cluster(self.root)
        self.cluster.start()
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(self.cluster.stop)

    def make_history(self):
        repo = self.root / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        shas = []
        for message, m, code in [("baseline", manifest(), "1"),
                                 ("slower base", manifest("base:1.5"), "2"),
                                 ("docs only", manifest("base:1.5"), "2")]:
            (repo / "src").mkdir(exist_ok=True)
            (repo / "perfwatch.json").write_text(json.dumps(m, indent=2))
            (repo / "src" / "k.c").write_text(code)
            if message == "docs only":
                (repo / "README.md").write_text("docs\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", message)
            shas.append(git(repo, "rev-parse", "HEAD"))
        return repo, shas

    def executor_config(self):
        # The README's Slurm config, with this cluster's two partitions.
        config = json.loads((ROOT / "examples" / "executors" / "slurm.json").read_text())
        config["testbeds"][0].update({"name": "hopper", "partition": "hopper", "gres": "gpu:1", "slots": 2})
        config["testbeds"][1].update({"name": "blackwell", "partition": "blackwell", "gres": "gpu:1", "slots": 1})
        for t in config["testbeds"]:
            t.pop("srun_args", None)  # the docs' account and constraint are not on this cluster
            t.pop("time_limit", None)
        path = self.root / "executor.json"
        path.write_text(json.dumps(config))
        return path

    def test_history_through_slurm_on_two_testbeds_with_a_cancelled_job_requeued(self):
        repo, shas = self.make_history()
        db = self.root / "pw.db"
        state = self.root / "state"
        cancelled = []

        # Cancel one bench job that has run a while: Slurm ends it as it
        # would on preemption; perfwatch must record it as lost and run it again.
        def killer(stop):
            while not stop.is_set() and not cancelled:
                for job_id, name, partition in self.cluster.running_bench_jobs():
                    time.sleep(0.3)
                    run(["scancel", job_id], env=self.cluster.env)
                    cancelled.append((job_id, name, partition))
                    break
                time.sleep(0.1)

        stop = threading.Event()
        thread = threading.Thread(target=killer, args=(stop,))
        thread.start()
        try:
            started = time.monotonic()
            watch = subprocess.run(
                [PERFWATCH, "--db", str(db), "--state-dir", str(state), "watch", "--repo", str(repo), "--since", shas[0],
                 "--once", "--executor", str(self.executor_config())],
                env=self.cluster.env, text=True, capture_output=True, timeout=600)
            wall = time.monotonic() - started
        finally:
            stop.set()
            thread.join()
        log = watch.stderr
        self.assertEqual(watch.returncode, 0, log)
        self.assertTrue(cancelled, "no bench job was seen running to cancel\n" + log)

        con = sqlite3.connect(db)
        con.row_factory = sqlite3.Row
        testbeds = {r["id"]: r["name"] for r in con.execute("SELECT id, name FROM testbeds")}
        self.assertEqual(sorted(testbeds.values()), ["blackwell", "hopper"], log)
        runs = con.execute(
            "SELECT r.id, c.sha, r.testbed_id, r.status, r.message, r.placement_json, r.kind "
            "FROM runs r JOIN commits c ON c.id = r.commit_id ORDER BY r.id").fetchall()

        # The cancelled job: a run of its own, lost, with Slurm's word for it.
        job_id, name, partition = cancelled[0]
        lost = [r for r in runs if r["status"] == "lost"]
        self.assertEqual(len(lost), 1, [dict(r) for r in runs])
        self.assertEqual("perfwatch-run-%d" % lost[0]["id"], name)
        self.assertIn("slurm job %s" % job_id, lost[0]["message"])
        self.assertIn("CANCELLED", lost[0]["message"])
        placement = json.loads(lost[0]["placement_json"])
        self.assertEqual(placement["executor"], "slurm")
        self.assertEqual(placement["partition"], partition)
        self.assertEqual(str(placement["slurm_job_id"]), job_id)
        self.assertRegex(log, r"step=requeue .*run=%d .*lost=1" % lost[0]["id"])

        # Every measured commit on both testbeds, its runs complete despite the loss.
        by = {}
        for r in runs:
            if r["status"] == "ok" and r["kind"] == "bench":
                by.setdefault((r["sha"], testbeds[r["testbed_id"]]), 0)
                by[(r["sha"], testbeds[r["testbed_id"]])] += 1
        for sha in shas[:2]:
            for bed in ("hopper", "blackwell"):
                self.assertGreaterEqual(by.get((sha, bed), 0), 3, (sha[:10], bed, by))
        # The docs-only commit cost no Slurm job on either testbed.
        self.assertFalse([r for r in runs if r["sha"] == shas[2]])
        # Builds ran as Slurm jobs too, once a testbed (the second run skips it).
        builds = con.execute("SELECT count(*) FROM builds WHERE log_path != ''").fetchone()[0]
        self.assertGreaterEqual(builds, 4)

        # The planted slowdown is flagged on each testbed, the flag naming it.
        flags = con.execute(
            "SELECT f.testbed_id, f.variant, c.sha FROM flags f JOIN commits c ON c.id = f.commit_id "
            "WHERE f.kind = 'regression' AND f.withdrawn_at IS NULL").fetchall()
        flagged = {(testbeds[f["testbed_id"]], f["sha"]) for f in flags if f["variant"] == "base"}
        self.assertEqual(flagged, {("hopper", shas[1]), ("blackwell", shas[1])}, log)
        self.assertRegex(log, r"flag.*testbed=(hopper|blackwell)")
        print("watch of 3 commits on 2 Slurm testbeds: %.1f s wall, %d runs, 1 cancelled job re-run" %
              (wall, len(runs)))


if __name__ == "__main__":
    unittest.main()
