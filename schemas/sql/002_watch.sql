-- perfwatch store, schema version 2: watching and judging (`perfwatch watch`,
-- `noise`, `experiment`, the web API): the job queue, commits' pooled values,
-- noise bands, comparisons, flags, experiments with their evidence, and
-- annotations. Conventions as in 001.

-- The daemon's queue.
CREATE TABLE jobs (
  id           INTEGER PRIMARY KEY,
  repo_id      INTEGER NOT NULL REFERENCES repos(id),
  commit_sha   TEXT NOT NULL,
  branch       TEXT NOT NULL DEFAULT '',
  kind         TEXT NOT NULL CHECK (kind IN ('bench', 'noise', 'backfill')),
  state        TEXT NOT NULL DEFAULT 'queued'
               CHECK (state IN ('queued', 'running', 'done', 'failed', 'cut_off', 'skipped')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  priority     INTEGER NOT NULL DEFAULT 0,
  options_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(options_json)),
  retry_of     INTEGER REFERENCES jobs(id),
  -- A re-queued job keeps the place in the queue of the job it redoes (that
  -- job's queue_position, or its id); NULL: its own id is its place.
  queue_position INTEGER,
  enqueued_at  INTEGER NOT NULL,
  started_at   INTEGER,
  finished_at  INTEGER,
  message      TEXT NOT NULL DEFAULT ''
);
-- Never two live jobs of the same work for one commit (bench and backfill
-- are the same work), whoever enqueues.
CREATE UNIQUE INDEX jobs_one_live
  ON jobs(repo_id, commit_sha, (CASE kind WHEN 'noise' THEN 'noise' ELSE 'bench' END))
  WHERE state IN ('queued', 'running');
CREATE INDEX jobs_by_commit ON jobs(repo_id, commit_sha);
CREATE INDEX jobs_claim_order ON jobs(priority DESC, coalesce(queue_position, id)) WHERE state = 'queued';
CREATE INDEX jobs_by_state ON jobs(state);
CREATE UNIQUE INDEX jobs_one_retry ON jobs(retry_of) WHERE retry_of IS NOT NULL;

-- The job that made a run: recovery after a crash finds the runs of a
-- cut-off job through it.
ALTER TABLE runs ADD COLUMN job_id INTEGER REFERENCES jobs(id);
CREATE INDEX runs_by_job ON runs(job_id) WHERE job_id IS NOT NULL;

-- A commit's pooled value at a point over its runs' medians.
CREATE TABLE commit_summaries (
  commit_id  INTEGER NOT NULL REFERENCES commits(id),
  testbed_id INTEGER NOT NULL REFERENCES testbeds(id),
  variant    TEXT NOT NULL,
  point_id   INTEGER NOT NULL REFERENCES points(id),
  metric     TEXT NOT NULL,
  runs       INTEGER NOT NULL CHECK (runs >= 0),
  median     REAL NOT NULL,
  ci_low     REAL,
  ci_high    REAL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (commit_id, testbed_id, variant, point_id)
) WITHOUT ROWID;

-- The band of a point for the difference of two measurements of one build.
CREATE TABLE noise_bands (
  testbed_id INTEGER NOT NULL REFERENCES testbeds(id),
  variant    TEXT NOT NULL,
  point_id   INTEGER NOT NULL REFERENCES points(id),
  band_rel   REAL NOT NULL CHECK (band_rel >= 0),
  method     TEXT NOT NULL DEFAULT '',
  k_runs     INTEGER NOT NULL DEFAULT 0,
  calibrated INTEGER NOT NULL DEFAULT 0 CHECK (calibrated IN (0, 1)),
  source     TEXT NOT NULL CHECK (source IN ('aa', 'history', 'default')),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (testbed_id, variant, point_id)
) WITHOUT ROWID;

CREATE TABLE comparisons (
  id                INTEGER PRIMARY KEY,
  commit_id         INTEGER NOT NULL REFERENCES commits(id),
  against_commit_id INTEGER NOT NULL REFERENCES commits(id),
  basis             TEXT NOT NULL CHECK (basis IN ('previous', 'pinned')),
  testbed_id        INTEGER NOT NULL REFERENCES testbeds(id),
  variant           TEXT NOT NULL,
  point_id          INTEGER NOT NULL REFERENCES points(id),
  metric            TEXT NOT NULL DEFAULT '',
  ratio             REAL,
  ci_low            REAL,
  ci_high           REAL,
  p_value           REAL,
  band_rel          REAL,
  runs              INTEGER NOT NULL DEFAULT 0,
  against_runs      INTEGER NOT NULL DEFAULT 0,
  verdict           TEXT NOT NULL CHECK (verdict IN ('regression', 'improvement', 'within_noise', 'undecided')),
  updated_at        INTEGER NOT NULL,
  UNIQUE (commit_id, against_commit_id, testbed_id, variant, point_id)
);

CREATE TABLE flags (
  id            INTEGER PRIMARY KEY,
  commit_id     INTEGER NOT NULL REFERENCES commits(id),
  testbed_id    INTEGER NOT NULL REFERENCES testbeds(id),
  variant       TEXT NOT NULL,
  point_id      INTEGER NOT NULL REFERENCES points(id),
  kind          TEXT NOT NULL CHECK (kind IN ('regression', 'improvement', 'changepoint')),
  magnitude_rel REAL NOT NULL,
  comparison_id INTEGER REFERENCES comparisons(id),
  detail_json   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail_json)),
  created_at    INTEGER NOT NULL,
  ack_reason    TEXT,
  ack_by        TEXT,
  ack_at        INTEGER,
  UNIQUE (commit_id, testbed_id, variant, point_id, kind),
  CHECK ((ack_at IS NULL) = (ack_reason IS NULL))
);
-- The history's lookup of a commit's flag at a point is served by the
-- UNIQUE index above (commit first); open flags are counted for /metrics.
-- Flag lists filter a small table and need no index of their own.
CREATE INDEX flags_open ON flags(kind, id) WHERE ack_at IS NULL;

CREATE TABLE experiments (
  id              INTEGER PRIMARY KEY,
  ident           TEXT UNIQUE,  -- the creator's stable identity; NULL for none
  repo_id         INTEGER REFERENCES repos(id),
  hypothesis      TEXT NOT NULL,
  source          TEXT NOT NULL CHECK (source IN ('auto', 'trailer', 'manual')),
  group_key       TEXT NOT NULL DEFAULT '',  -- Perf-Experiment id
  metric          TEXT NOT NULL DEFAULT '',
  testbed_id      INTEGER REFERENCES testbeds(id),
  baseline_json   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(baseline_json)),
  candidates_json TEXT NOT NULL DEFAULT '[]'
                  CHECK (json_valid(candidates_json) AND json_type(candidates_json) = 'array'),
  verdict         TEXT NOT NULL DEFAULT 'pending'
                  CHECK (verdict IN ('accepted', 'rejected', 'mixed', 'no_effect', 'pending')),
  conclusion      TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX experiments_by_created ON experiments(created_at);
CREATE INDEX experiments_by_verdict ON experiments(verdict, created_at);
CREATE INDEX experiments_by_group ON experiments(group_key) WHERE group_key <> '';

-- Full-text search over what people write and what was tried. External
-- content: the text lives once, in experiments; the triggers keep the index.
CREATE VIRTUAL TABLE experiments_fts USING fts5(
  hypothesis, conclusion, group_key, baseline_json, candidates_json,
  content = 'experiments', content_rowid = 'id');
CREATE TRIGGER experiments_fts_insert AFTER INSERT ON experiments BEGIN
  INSERT INTO experiments_fts(rowid, hypothesis, conclusion, group_key, baseline_json, candidates_json)
  VALUES (new.id, new.hypothesis, new.conclusion, new.group_key, new.baseline_json, new.candidates_json);
END;
CREATE TRIGGER experiments_fts_delete AFTER DELETE ON experiments BEGIN
  INSERT INTO experiments_fts(experiments_fts, rowid, hypothesis, conclusion, group_key, baseline_json, candidates_json)
  VALUES ('delete', old.id, old.hypothesis, old.conclusion, old.group_key, old.baseline_json, old.candidates_json);
END;
CREATE TRIGGER experiments_fts_update AFTER UPDATE OF hypothesis, conclusion, group_key, baseline_json, candidates_json
ON experiments BEGIN
  INSERT INTO experiments_fts(experiments_fts, rowid, hypothesis, conclusion, group_key, baseline_json, candidates_json)
  VALUES ('delete', old.id, old.hypothesis, old.conclusion, old.group_key, old.baseline_json, old.candidates_json);
  INSERT INTO experiments_fts(rowid, hypothesis, conclusion, group_key, baseline_json, candidates_json)
  VALUES (new.id, new.hypothesis, new.conclusion, new.group_key, new.baseline_json, new.candidates_json);
END;

CREATE TABLE experiment_evidence (
  experiment_id   INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  candidate       TEXT NOT NULL,
  point_id        INTEGER NOT NULL REFERENCES points(id),
  baseline_value  REAL,
  candidate_value REAL,
  delta_rel       REAL,
  band_rel        REAL,
  p_value         REAL,
  runs            INTEGER NOT NULL DEFAULT 0,
  verdict         TEXT NOT NULL CHECK (verdict IN ('regression', 'improvement', 'within_noise', 'undecided')),
  PRIMARY KEY (experiment_id, candidate, point_id)
) WITHOUT ROWID;

CREATE TABLE experiment_refs (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  commit_id     INTEGER REFERENCES commits(id),
  run_id        INTEGER REFERENCES runs(id),
  role          TEXT NOT NULL DEFAULT '',
  CHECK (commit_id IS NOT NULL OR run_id IS NOT NULL)
);
CREATE UNIQUE INDEX experiment_refs_unique
  ON experiment_refs(experiment_id, coalesce(commit_id, 0), coalesce(run_id, 0), role);
CREATE INDEX experiment_refs_by_commit ON experiment_refs(commit_id) WHERE commit_id IS NOT NULL;
CREATE INDEX experiment_refs_by_run ON experiment_refs(run_id) WHERE run_id IS NOT NULL;

CREATE TABLE annotations (
  id        INTEGER PRIMARY KEY,
  commit_id INTEGER REFERENCES commits(id),
  run_id    INTEGER REFERENCES runs(id),
  text      TEXT NOT NULL,
  author    TEXT NOT NULL DEFAULT '',
  at        INTEGER NOT NULL,
  CHECK (commit_id IS NOT NULL OR run_id IS NOT NULL)
);
CREATE INDEX annotations_by_commit ON annotations(commit_id) WHERE commit_id IS NOT NULL;
CREATE INDEX annotations_by_run ON annotations(run_id) WHERE run_id IS NOT NULL;
