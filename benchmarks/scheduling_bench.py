#!/usr/bin/env python3
"""How the executors scale: the wall time of a 20-commit back-fill with 1, 2
and 4 parallel slots against the ideal N x, and what a Slurm job costs.

The bench is tests/runner/fake_bench with a fixed run time (each trial
sleeps FAKE_BENCH_TRIAL_MS; min = max trials, so every run is the same
length) and no noise, so no comparison needs more runs than the first ones:
what is measured is the scheduling, not the judging. Slots are fake GPUs
(a stand-in nvidia-smi, executor local-gpus): the executor cannot tell.
runs.per_commit is 4, so 1, 2 and 4 slots take 4, 2 and 1 rounds a commit.

The Slurm part (--slurm) starts the single-node cluster of tests/slurm
(root, slurm-wlm and munge) and times `srun true` and the same back-fill
through Slurm with 1 and 2 slots a testbed: the difference from local-gpus
at the same slots, per job, is Slurm's cost.

  benchmarks/scheduling_bench.py [--commits 20] [--trial-ms 100] [--slurm]

Prints a markdown table (benchmarks/scheduling_bench.md keeps the figures).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PERFWATCH = os.environ.get("PERFWATCH_BIN", str(ROOT / "build" / "perfwatch"))
FAKE_BENCH = os.environ.get("FAKE_BENCH", str(ROOT / "build" / "tests" / "runner" / "fake_bench"))
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x")


def sh(*args, **kw):
    return subprocess.run(args, check=True, text=True, capture_output=True, **kw).stdout.strip()


def make_history(root, commits, trial_ms):
    repo = root / "repo"
    repo.mkdir()
    sh("git", "-C", str(repo), "init", "-q", "-b", "main", env=GIT_ENV)
    manifest = {
        "schema_version": 1,
        "build": {"command": "true"},
        "paths": ["src/", "perfwatch.json"],
        "bench": {"command": FAKE_BENCH, "timeout_s": 600, "idle_timeout_s": 60,
                  "env": {"FAKE_BENCH_TRIAL_MS": str(trial_ms)}},
        "variants": [{"name": "base", "baseline": True, "params": {"block_t": 32}},
                     {"name": "w8", "params": {"block_t": 32, "num_warps": 8}}],
        "sweep": {"batch": [1, 8]},
        "trials": {"min": 4, "max": 4, "target_rel_ci": 0.5, "budget_s": 60},
        "runs": {"per_commit": 4, "max_per_commit": 8},
    }
    (repo / "perfwatch.json").write_text(json.dumps(manifest, indent=2))
    (repo / "src").mkdir()
    shas = []
    for i in range(commits):
        (repo / "src" / "k.c").write_text(str(i))
        sh("git", "-C", str(repo), "add", "-A", env=GIT_ENV)
        sh("git", "-C", str(repo), "commit", "-q", "-m", "commit %d" % i, env=GIT_ENV)
        shas.append(sh("git", "-C", str(repo), "rev-parse", "HEAD"))
    return repo, shas


def fake_gpus(root, n):
    smi = root / ("nvidia-smi-%d" % n)
    smi.write_text("#!/bin/sh\n" + "".join("echo '%d, GPU-bench-%d, Fake H200'\n" % (i, i) for i in range(n)))
    smi.chmod(0o755)
    config = root / ("gpus-%d.json" % n)
    config.write_text(json.dumps({"version": 1, "executor": "local-gpus", "nvidia_smi": str(smi)}))
    return config


def slurm_config(root, slots):
    config = root / ("slurm-%d.json" % slots)
    config.write_text(json.dumps({"version": 1, "executor": "slurm", "testbeds": [
        {"name": "hopper", "partition": "hopper", "gres": "gpu:1", "slots": slots}]}))
    return config


def backfill(root, repo, first, executor, label, env=None):
    db = root / ("%s.db" % label)
    started = time.monotonic()
    out = subprocess.run([PERFWATCH, "--db", str(db), "--state-dir", str(root / ("%s.work" % label)), "watch",
                          "--repo", str(repo), "--since", first, "--once", "--executor", str(executor)],
                         text=True, capture_output=True, env=env)
    wall = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit("%s: perfwatch watch failed:\n%s" % (label, out.stderr[-3000:]))
    import sqlite3
    con = sqlite3.connect(db)
    runs, bench_s = con.execute(
        "SELECT count(*), sum(wall_s) FROM runs WHERE kind = 'bench' AND status = 'ok'").fetchone()
    return wall, runs, bench_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=20)
    ap.add_argument("--trial-ms", type=int, default=100)
    ap.add_argument("--slurm", action="store_true", help="also through a single-node Slurm (root)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="perfwatch-sched-") as tmp:
        root = Path(tmp)
        repo, shas = make_history(root, args.commits, args.trial_ms)
        rows = []
        for slots in (1, 2, 4):
            wall, runs, bench_s = backfill(root, repo, shas[0], fake_gpus(root, slots), "gpus%d" % slots)
            rows.append(("local-gpus", slots, wall, runs, bench_s))
            print("local-gpus %d slot(s): %.1f s, %d runs" % (slots, wall, runs), flush=True)

        srun = None
        if args.slurm:
            cluster = root / "slurm"
            start = subprocess.run([str(ROOT / "tests" / "slurm" / "cluster.sh"), "start", str(cluster)],
                                   text=True, capture_output=True)
            if start.returncode != 0:
                raise SystemExit("cluster.sh start failed:\n" + start.stderr)
            env = dict(os.environ, SLURM_CONF=str(cluster / "etc" / "slurm.conf"))
            try:
                times = []
                for _ in range(20):
                    t0 = time.monotonic()
                    subprocess.run(["srun", "-p", "hopper", "--gres=gpu:1", "--quiet", "true"], check=True, env=env)
                    times.append(time.monotonic() - t0)
                srun = (statistics.median(times), min(times), max(times))
                for slots in (1, 2):
                    wall, runs, bench_s = backfill(root, repo, shas[0], slurm_config(root, slots), "slurm%d" % slots,
                                                   env)
                    rows.append(("slurm", slots, wall, runs, bench_s))
                    print("slurm %d slot(s): %.1f s, %d runs" % (slots, wall, runs), flush=True)
            finally:
                subprocess.run([str(ROOT / "tests" / "slurm" / "cluster.sh"), "stop", str(cluster)])

    base = rows[0][2]
    print()
    print("| executor | slots | wall s (%d commits) | runs | wall s a commit | speed-up | ideal | "
          "of ideal | bench s a run |" % args.commits)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for executor, slots, wall, runs, bench_s in rows:
        speed = base / wall
        print("| %s | %d | %.1f | %d | %.2f | %.2fx | %dx | %.0f%% | %.2f |" % (
            executor, slots, wall, runs, wall / args.commits, speed, slots, 100 * speed / slots, bench_s / runs))
    if srun:
        print("\n`srun --gres=gpu:1 true`, 20 times: median %.3f s (min %.3f, max %.3f)" % srun)
        local = {s: w for e, s, w, r, b in rows if e == "local-gpus"}
        for executor, slots, wall, runs, bench_s in rows:
            if executor == "slurm":
                print("slurm, %d slot(s): %.3f s more a job than local-gpus at the same slots (%d jobs)" % (
                    slots, (wall - local[slots]) / runs, runs))


if __name__ == "__main__":
    main()
