-- perfwatch store, schema version 1: what benchmarking one commit stores
-- (`perfwatch bench`): the repo and its commits, builds, testbeds, runs, the
-- variants and sweep points of a run, correctness checks, raw trials and
-- per-run summaries.
--
-- Conventions: *_at columns are unix seconds (INTEGER, UTC); *_json columns
-- hold valid JSON text; enumerations are lower-case words checked here.
-- Applied by store/migrations.cpp in one transaction with user_version = 1.

CREATE TABLE repos (
  id         INTEGER PRIMARY KEY,
  path       TEXT NOT NULL UNIQUE,
  url        TEXT NOT NULL DEFAULT '',
  name       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

-- Watch state: the branches seen and the head last acted on.
CREATE TABLE branches (
  repo_id       INTEGER NOT NULL REFERENCES repos(id),
  name          TEXT NOT NULL,
  head_sha      TEXT NOT NULL DEFAULT '',
  first_seen_at INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (repo_id, name)
) WITHOUT ROWID;

CREATE TABLE commits (
  id              INTEGER PRIMARY KEY,
  repo_id         INTEGER NOT NULL REFERENCES repos(id),
  sha             TEXT NOT NULL,
  parent_sha      TEXT NOT NULL DEFAULT '',  -- first parent; '' for a root commit
  author          TEXT NOT NULL DEFAULT '',
  email           TEXT NOT NULL DEFAULT '',
  committed_at    INTEGER NOT NULL DEFAULT 0,
  subject         TEXT NOT NULL DEFAULT '',
  message         TEXT NOT NULL DEFAULT '',
  paths_hash      TEXT NOT NULL DEFAULT '',  -- tree hash of the manifest's paths
  inherited_from  INTEGER REFERENCES commits(id),  -- touched none of them: carries that commit's results
  perf_hypothesis TEXT NOT NULL DEFAULT '',
  perf_experiment TEXT NOT NULL DEFAULT '',
  recorded_at     INTEGER NOT NULL,
  CHECK (inherited_from IS NULL OR inherited_from <> id)
);
-- Also serves the first-parent walk: (repo_id, sha = child's parent_sha).
CREATE UNIQUE INDEX commits_by_sha ON commits(repo_id, sha);

CREATE TABLE builds (
  id          INTEGER PRIMARY KEY,
  commit_id   INTEGER NOT NULL REFERENCES commits(id),
  status      TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
  command     TEXT NOT NULL DEFAULT '',
  exit_code   INTEGER,
  duration_s  REAL NOT NULL DEFAULT 0,
  log_tail    TEXT NOT NULL DEFAULT '',
  log_path    TEXT NOT NULL DEFAULT '',
  toolchain   TEXT NOT NULL DEFAULT '',
  started_at  INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX builds_by_commit ON builds(commit_id);

-- A machine and backend that measures; noise is per testbed.
CREATE TABLE testbeds (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  hostname    TEXT NOT NULL DEFAULT '',
  backend     TEXT NOT NULL CHECK (backend IN ('cpu', 'cuda')),
  device_name TEXT NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL
);

-- One bench process, or the attempt at one. Never overwritten: benchmarking
-- a commit again adds a run.
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY,
  commit_id       INTEGER NOT NULL REFERENCES commits(id),
  build_id        INTEGER REFERENCES builds(id),
  testbed_id      INTEGER REFERENCES testbeds(id),
  kind            TEXT NOT NULL CHECK (kind IN ('bench', 'noise', 'baseline-rerun')),
  purpose         TEXT NOT NULL DEFAULT '',
  status          TEXT NOT NULL CHECK (status IN ('running', 'ok', 'build_failed', 'crashed', 'timeout',
                                                  'protocol_error', 'cut_off', 'failed')),
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
  trial_count     INTEGER NOT NULL DEFAULT 0  -- set when the run ends
);
-- A commit's runs on a testbed, by kind and status (history, comparisons).
CREATE INDEX runs_by_commit ON runs(commit_id, testbed_id, kind, status);
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_finished ON runs(finished_at) WHERE finished_at IS NOT NULL;

-- A variant as one run built and ran it.
CREATE TABLE run_variants (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  name           TEXT NOT NULL,
  params_json    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(params_json)),
  is_baseline    INTEGER NOT NULL DEFAULT 0 CHECK (is_baseline IN (0, 1)),
  status         TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'infeasible')),
  reason         TEXT NOT NULL DEFAULT '',
  resources_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(resources_json)),
  UNIQUE (run_id, name),
  -- the parent key of (run_id, variant_id) in checks, trials and summaries:
  -- a row can only name a variant of its own run
  UNIQUE (run_id, id)
);
CREATE UNIQUE INDEX run_variants_one_baseline ON run_variants(run_id) WHERE is_baseline = 1;

-- Sweep coordinates, shared by all runs.
CREATE TABLE points (
  id         INTEGER PRIMARY KEY,
  key        TEXT NOT NULL UNIQUE,  -- "b96_h16_k2048_bf16"
  batch      INTEGER,
  heads      INTEGER,
  topk       INTEGER,
  dtype      TEXT NOT NULL DEFAULT '',
  extra_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(extra_json))
);

CREATE TABLE checks (
  run_id      INTEGER NOT NULL,
  variant_id  INTEGER NOT NULL,
  point_id    INTEGER NOT NULL REFERENCES points(id),
  status      TEXT NOT NULL CHECK (status IN ('ok', 'incorrect', 'infeasible', 'unknown')),
  reason      TEXT NOT NULL DEFAULT '',
  rel_l2_o    REAL,
  max_abs_lse REAL,
  detail_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail_json)),
  PRIMARY KEY (run_id, variant_id, point_id),
  FOREIGN KEY (run_id, variant_id) REFERENCES run_variants(run_id, id)
) WITHOUT ROWID;

-- The raw data; millions of rows. Clustered by run so that a run's trials
-- are one range and inserting a running run's trials appends.
CREATE TABLE trials (
  run_id       INTEGER NOT NULL,
  variant_id   INTEGER NOT NULL,
  point_id     INTEGER NOT NULL REFERENCES points(id),
  trial_no     INTEGER NOT NULL CHECK (trial_no >= 1),
  time_us      REAL NOT NULL CHECK (time_us > 0),
  steps        INTEGER NOT NULL CHECK (steps >= 1),
  tokens_per_s REAL NOT NULL,
  bytes_per_s  REAL NOT NULL,
  flops_per_s  REAL NOT NULL,
  sm_clock_mhz REAL,
  throttled    INTEGER NOT NULL CHECK (throttled IN (0, 1)),
  PRIMARY KEY (run_id, variant_id, point_id, trial_no),
  FOREIGN KEY (run_id, variant_id) REFERENCES run_variants(run_id, id)
) WITHOUT ROWID;

-- Per run x variant x point, computed by analysis/. History reads these,
-- never trials: keyed by (variant_id, point_id) for that lookup.
CREATE TABLE summaries (
  run_id            INTEGER NOT NULL,
  variant_id        INTEGER NOT NULL,
  point_id          INTEGER NOT NULL REFERENCES points(id),
  metric            TEXT NOT NULL,
  n                 INTEGER NOT NULL CHECK (n >= 0),
  median            REAL,
  ci_low            REAL,
  ci_high           REAL,
  mean              REAL,
  stddev            REAL,
  minimum           REAL,
  maximum           REAL,
  dropped_throttled INTEGER NOT NULL DEFAULT 0,
  stop_reason       TEXT NOT NULL DEFAULT '',
  computed_at       INTEGER NOT NULL,
  PRIMARY KEY (variant_id, point_id),
  FOREIGN KEY (run_id, variant_id) REFERENCES run_variants(run_id, id)
) WITHOUT ROWID;
CREATE INDEX summaries_by_run ON summaries(run_id);
