-- perfwatch store, schema version 6: flags that judging can take back.
--
-- A flag stands on the evidence it was raised on. When either commit later
-- gets more runs the comparison is judged again, and a flag it no longer
-- supports is withdrawn (withdrawn_at, withdrawn_reason: what the re-judged
-- comparison said), never deleted, so a person sees what happened to it. A
-- withdrawn flag that the evidence supports again is reinstated (both NULL).
--
-- Kind 'drift': a slide of small steps, each within the band of its own
-- comparison, that together left the band of the reference it is measured
-- against (the pinned baseline, or the level the cell held since its last
-- flag). Its detail names where the slide started and where it left the band.
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with
-- every row and id kept.
CREATE TABLE flags_v5 (
  id               INTEGER PRIMARY KEY,
  commit_id        INTEGER NOT NULL REFERENCES commits(id),
  testbed_id       INTEGER NOT NULL REFERENCES testbeds(id),
  variant          TEXT NOT NULL,
  point_id         INTEGER NOT NULL REFERENCES points(id),
  kind             TEXT NOT NULL CHECK (kind IN ('regression', 'improvement', 'changepoint', 'drift')),
  magnitude_rel    REAL NOT NULL,
  comparison_id    INTEGER REFERENCES comparisons(id),
  detail_json      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail_json)),
  created_at       INTEGER NOT NULL,
  ack_reason       TEXT,
  ack_by           TEXT,
  ack_at           INTEGER,
  withdrawn_reason TEXT,
  withdrawn_at     INTEGER,
  UNIQUE (commit_id, testbed_id, variant, point_id, kind),
  CHECK ((ack_at IS NULL) = (ack_reason IS NULL)),
  CHECK ((withdrawn_at IS NULL) = (withdrawn_reason IS NULL))
);
INSERT INTO flags_v5 (id, commit_id, testbed_id, variant, point_id, kind, magnitude_rel, comparison_id,
                      detail_json, created_at, ack_reason, ack_by, ack_at)
  SELECT id, commit_id, testbed_id, variant, point_id, kind, magnitude_rel, comparison_id,
         detail_json, created_at, ack_reason, ack_by, ack_at
  FROM flags;
DROP TABLE flags;
ALTER TABLE flags_v5 RENAME TO flags;
-- Open: neither acknowledged nor withdrawn.
CREATE INDEX flags_open ON flags(kind, id) WHERE ack_at IS NULL AND withdrawn_at IS NULL;
