-- perfwatch store, schema version 10: several testbeds measure one history
-- (issue 12: the GPUs of a machine, the partitions of a Slurm cluster).
--
-- jobs.testbed: the testbed a job measures on, by the name the executor
-- config gives it ('' = the daemon's only one, as before). A commit has one
-- live job of the same work per testbed, so the unique index now names it.
--
-- runs.placement_json: where the executor placed the bench process (the
-- executor, the GPU's index, UUID and model for local-gpus, the Slurm job id,
-- name, partition and node for slurm); runs.device_uuid: the GPU's UUID
-- alone, indexed, so a card that is consistently off can be found.
--
-- runs.status 'lost': the executor lost the bench process (a Slurm job
-- cancelled, preempted, past its time limit, or its node failed); the
-- message holds Slurm's reason. Like cut_off it is no verdict on the commit
-- and does not count against runs.max_per_commit; the run is re-queued.
-- SQLite cannot change a CHECK constraint in place: runs is rebuilt with
-- every row, id and column kept (foreign keys are off during migrations).
ALTER TABLE jobs ADD COLUMN testbed TEXT NOT NULL DEFAULT '';
DROP INDEX jobs_one_live;
CREATE UNIQUE INDEX jobs_one_live
  ON jobs(repo_id, commit_sha, testbed, (CASE kind WHEN 'noise' THEN 'noise' ELSE 'bench' END))
  WHERE state IN ('queued', 'running');

CREATE TABLE runs_v10 (
  id              INTEGER PRIMARY KEY,
  commit_id       INTEGER NOT NULL REFERENCES commits(id),
  build_id        INTEGER REFERENCES builds(id),
  testbed_id      INTEGER REFERENCES testbeds(id),
  kind            TEXT NOT NULL CHECK (kind IN ('bench', 'noise', 'baseline-rerun')),
  purpose         TEXT NOT NULL DEFAULT '',
  status          TEXT NOT NULL CHECK (status IN ('running', 'ok', 'build_failed', 'crashed', 'timeout',
                                                  'protocol_error', 'cut_off', 'failed', 'store_failed',
                                                  'lost')),
  exit_code       INTEGER,
  signal          INTEGER,
  message         TEXT NOT NULL DEFAULT '',
  stdout_tail     TEXT NOT NULL DEFAULT '',
  stderr_tail     TEXT NOT NULL DEFAULT '',
  log_path        TEXT NOT NULL DEFAULT '',
  started_at      INTEGER NOT NULL,
  finished_at     INTEGER,
  wall_s          REAL,
  seed            INTEGER,
  provenance_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(provenance_json)),
  manifest_json   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(manifest_json)),
  trial_count     INTEGER NOT NULL DEFAULT 0,
  job_id          INTEGER REFERENCES jobs(id),
  owner_pid         INTEGER,
  owner_start_ticks INTEGER,
  owner_boot_id     TEXT,
  owner_host        TEXT,
  placement_json  TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(placement_json)),
  device_uuid     TEXT NOT NULL DEFAULT ''
);
INSERT INTO runs_v10 (id, commit_id, build_id, testbed_id, kind, purpose, status, exit_code, signal, message,
                      stdout_tail, stderr_tail, log_path, started_at, finished_at, wall_s, seed, provenance_json,
                      manifest_json, trial_count, job_id, owner_pid, owner_start_ticks, owner_boot_id, owner_host)
  SELECT id, commit_id, build_id, testbed_id, kind, purpose, status, exit_code, signal, message, stdout_tail,
         stderr_tail, log_path, started_at, finished_at, wall_s, seed, provenance_json, manifest_json,
         trial_count, job_id, owner_pid, owner_start_ticks, owner_boot_id, owner_host
  FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v10 RENAME TO runs;
CREATE INDEX runs_by_commit ON runs(commit_id, testbed_id, kind, status);
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_finished ON runs(finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX runs_by_job ON runs(job_id) WHERE job_id IS NOT NULL;
CREATE INDEX runs_by_device ON runs(testbed_id, device_uuid) WHERE device_uuid != '';
