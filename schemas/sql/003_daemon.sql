-- perfwatch store, schema version 3: what the daemon (`perfwatch watch`,
-- `perfwatch noise`) keeps besides results: the evidence behind each noise
-- band, and the live progress of running jobs. Conventions as in 001.

-- The evidence a noise band is computed from (analysis/noise_band.h): pooled
-- squared deviations of log run values and their degrees of freedom, one row
-- per contribution, so that a contribution recomputed (a commit that got more
-- runs, a job redone after a crash) replaces itself instead of counting twice.
--   paired = 0: run values (medians) of one variant x point, for commit comparisons;
--   paired = 1: per-run candidate/baseline ratios, for variant A/B experiments.
--   source: who contributed it ("aa:<first run id>", "commit:<id>", "pair:<id>-<id>").
--   kind:   'aa' (A/A runs of `perfwatch noise`) or 'history' (commits' own runs,
--           unchanged pairs).
CREATE TABLE noise_evidence_parts (
  testbed_id INTEGER NOT NULL REFERENCES testbeds(id),
  variant    TEXT NOT NULL,
  point_id   INTEGER NOT NULL REFERENCES points(id),
  paired     INTEGER NOT NULL CHECK (paired IN (0, 1)),
  source     TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('aa', 'history')),
  sum_sq_log REAL NOT NULL CHECK (sum_sq_log >= 0),
  df         REAL NOT NULL CHECK (df >= 0),
  runs       INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (testbed_id, variant, point_id, paired, source)
) WITHOUT ROWID;

-- Running sums of the parts per kind, kept in the same transaction as each
-- part, so reading a band costs the same whatever the history's length.
CREATE TABLE noise_evidence_totals (
  testbed_id INTEGER NOT NULL REFERENCES testbeds(id),
  variant    TEXT NOT NULL,
  point_id   INTEGER NOT NULL REFERENCES points(id),
  paired     INTEGER NOT NULL CHECK (paired IN (0, 1)),
  kind       TEXT NOT NULL CHECK (kind IN ('aa', 'history')),
  sum_sq_log REAL NOT NULL,
  df         REAL NOT NULL,
  runs       INTEGER NOT NULL,
  parts      INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (testbed_id, variant, point_id, paired, kind)
) WITHOUT ROWID;

-- What a running job is doing now, for the dashboard ("a running job shows
-- its progress"): its step and a JSON detail (run 2 of 3, point 4 of 6, ...).
-- One row per job, overwritten as it goes; kept after the job ends.
CREATE TABLE job_progress (
  job_id      INTEGER PRIMARY KEY REFERENCES jobs(id),
  step        TEXT NOT NULL,
  detail_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail_json)),
  updated_at  INTEGER NOT NULL
);
