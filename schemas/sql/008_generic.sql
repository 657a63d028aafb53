-- perfwatch store, schema version 8: points as maps of named axes, trials
-- with any declared metrics, a summary per metric.
--
-- Until now a point had the MLA decode step's four columns (batch, heads,
-- topk, dtype) and a trial its four metrics (time_us, tokens_per_s,
-- bytes_per_s, flops_per_s). A manifest of version 2 declares its own axes
-- and metrics, so:
--
-- points: keyed by the canonical form of its axes (runner::point_key:
--   "name=value" for every axis, names sorted, joined by ","), never by the
--   label people see, which a manifest may rename; the label as the API showed
--   it ("C<batch>"); the axes as a JSON object in the manifest's order.
--   Existing rows keep their ids (every table refers to points by id): their
--   axes are the old columns and extra_json, their key is rewritten to the
--   canonical form.
--
-- trials: the metrics of a trial are one JSON object, metrics_json (every
--   declared metric the bench reported). Not a narrow table of (trial, metric,
--   value) rows: a trial is written once and read whole (a run's table, an
--   export), never searched by metric -- history and judging read summaries --
--   so one row per trial keeps 1,000,000 trials one append each, with no
--   second B-tree and four times fewer rows. steps may now be unknown (an
--   adapter's program does not say). Existing rows carry their four metrics.
--
-- summaries: one row per run x variant x point x metric, every declared
--   metric summarised so a reader can show any of them; `judged` marks the one
--   the run was judged by (its manifest's metric), which is what judging and
--   history read. Existing rows were all of the judged metric.
--
-- SQLite cannot change a table's columns or key in place: each table is
-- rebuilt with every row kept (foreign keys are off while a migration runs,
-- and checked before it commits: store/migrations.cpp).

CREATE TABLE points_v8 (
  id        INTEGER PRIMARY KEY,
  key       TEXT NOT NULL UNIQUE,  -- "batch=96,dtype=bf16,heads=16,topk=2048"
  label     TEXT NOT NULL,         -- "C96"
  axes_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(axes_json) AND json_type(axes_json) = 'object')
);
-- The axes of an old row: its columns that hold a value, then extra_json's.
CREATE TEMP TABLE point_axes AS
  SELECT id, key AS old_key, batch,
         json_patch(
           json_patch(
             json_patch(
               json_patch(json('{}'), CASE WHEN batch IS NULL THEN '{}' ELSE json_object('batch', batch) END),
               CASE WHEN heads IS NULL THEN '{}' ELSE json_object('heads', heads) END),
             CASE WHEN topk IS NULL THEN '{}' ELSE json_object('topk', topk) END),
           CASE WHEN dtype = '' THEN '{}' ELSE json_object('dtype', dtype) END) AS core,
         extra_json
  FROM points;
-- Each old row's axes, one row per axis, by point and name.
CREATE TEMP TABLE point_axis_rows AS
  SELECT pa.id AS id, e.key AS k, e.value AS v
  FROM point_axes pa, json_each(json_patch(pa.core, pa.extra_json)) e
  ORDER BY pa.id, e.key;
CREATE TEMP TABLE point_keys AS
  SELECT id, group_concat(k || '=' || v, ',') AS key
  FROM (SELECT id, k, v FROM point_axis_rows ORDER BY id, k)
  GROUP BY id;
INSERT INTO points_v8 (id, key, label, axes_json)
  SELECT pa.id,
         coalesce(pk.key, pa.old_key),  -- a row with no axis at all keeps its old key
         CASE WHEN pa.batch IS NOT NULL THEN 'C' || pa.batch ELSE pa.old_key END,
         json_patch(pa.core, pa.extra_json)
  FROM point_axes pa LEFT JOIN point_keys pk ON pk.id = pa.id;
DROP TABLE point_keys;
DROP TABLE point_axis_rows;
DROP TABLE point_axes;
DROP TABLE points;
ALTER TABLE points_v8 RENAME TO points;

CREATE TABLE trials_v8 (
  run_id       INTEGER NOT NULL,
  variant_id   INTEGER NOT NULL,
  point_id     INTEGER NOT NULL REFERENCES points(id),
  trial_no     INTEGER NOT NULL CHECK (trial_no >= 1),
  metrics_json TEXT NOT NULL CHECK (json_valid(metrics_json)),  -- {"time_us": 41.2, "tokens_per_s": 1.9e6, ...}
  steps        INTEGER CHECK (steps >= 1),                     -- calls timed in the batch; NULL when not said
  sm_clock_mhz REAL,
  throttled    INTEGER NOT NULL CHECK (throttled IN (0, 1)),
  PRIMARY KEY (run_id, variant_id, point_id, trial_no),
  FOREIGN KEY (run_id, variant_id) REFERENCES run_variants(run_id, id)
) WITHOUT ROWID;
INSERT INTO trials_v8 (run_id, variant_id, point_id, trial_no, metrics_json, steps, sm_clock_mhz, throttled)
  SELECT run_id, variant_id, point_id, trial_no,
         json_object('time_us', time_us, 'tokens_per_s', tokens_per_s, 'bytes_per_s', bytes_per_s,
                     'flops_per_s', flops_per_s),
         steps, sm_clock_mhz, throttled
  FROM trials;
DROP TABLE trials;
ALTER TABLE trials_v8 RENAME TO trials;

CREATE TABLE summaries_v8 (
  run_id            INTEGER NOT NULL,
  variant_id        INTEGER NOT NULL,
  point_id          INTEGER NOT NULL REFERENCES points(id),
  metric            TEXT NOT NULL,
  judged            INTEGER NOT NULL DEFAULT 1 CHECK (judged IN (0, 1)),
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
  PRIMARY KEY (variant_id, point_id, metric),
  FOREIGN KEY (run_id, variant_id) REFERENCES run_variants(run_id, id)
) WITHOUT ROWID;
INSERT INTO summaries_v8 (run_id, variant_id, point_id, metric, judged, n, median, ci_low, ci_high, mean, stddev,
                          minimum, maximum, dropped_throttled, stop_reason, computed_at)
  SELECT run_id, variant_id, point_id, metric, 1, n, median, ci_low, ci_high, mean, stddev,
         minimum, maximum, dropped_throttled, stop_reason, computed_at
  FROM summaries;
DROP TABLE summaries;
ALTER TABLE summaries_v8 RENAME TO summaries;
CREATE INDEX summaries_by_run ON summaries(run_id);
