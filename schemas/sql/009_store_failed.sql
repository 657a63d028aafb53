-- perfwatch store, schema version 9: a run whose results could not be stored
-- has a status of its own.
--
-- `store_failed`: the database refused a write during the run (disk full, an
-- I/O error, a read-only file); the runner ended the bench at once rather
-- than drive it through trials that would be thrown away, and the run's
-- message names the error. Before this version such a run was `failed` with
-- a message starting "store_failed: "; those rows are moved to the new
-- status, their message kept whole.
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with
-- every row, id and column kept (foreign keys are off during migrations, and
-- the tables that name runs(id) name the new table after the rename).
CREATE TABLE runs_v9 (
  id              INTEGER PRIMARY KEY,
  commit_id       INTEGER NOT NULL REFERENCES commits(id),
  build_id        INTEGER REFERENCES builds(id),
  testbed_id      INTEGER REFERENCES testbeds(id),
  kind            TEXT NOT NULL CHECK (kind IN ('bench', 'noise', 'baseline-rerun')),
  purpose         TEXT NOT NULL DEFAULT '',
  status          TEXT NOT NULL CHECK (status IN ('running', 'ok', 'build_failed', 'crashed', 'timeout',
                                                  'protocol_error', 'cut_off', 'failed', 'store_failed')),
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
  owner_host        TEXT
);
INSERT INTO runs_v9 (id, commit_id, build_id, testbed_id, kind, purpose, status, exit_code, signal, message,
                     stdout_tail, stderr_tail, log_path, started_at, finished_at, wall_s, seed, provenance_json,
                     manifest_json, trial_count, job_id, owner_pid, owner_start_ticks, owner_boot_id, owner_host)
  SELECT id, commit_id, build_id, testbed_id, kind, purpose,
         CASE WHEN status = 'failed' AND message LIKE 'store\_failed: %' ESCAPE '\' THEN 'store_failed' ELSE status END,
         exit_code, signal, message, stdout_tail, stderr_tail, log_path, started_at, finished_at, wall_s, seed,
         provenance_json, manifest_json, trial_count, job_id, owner_pid, owner_start_ticks, owner_boot_id, owner_host
  FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v9 RENAME TO runs;
CREATE INDEX runs_by_commit ON runs(commit_id, testbed_id, kind, status);
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_finished ON runs(finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX runs_by_job ON runs(job_id) WHERE job_id IS NOT NULL;
