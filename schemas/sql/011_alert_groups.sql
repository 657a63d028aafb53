-- perfwatch store, schema version 11: alert groups.
--
-- The flags of one commit on one testbed form one alert group; people
-- triage the group, not each variant x point. A row here is the group's
-- triage: what a person (or judging) decided about it and why. A group
-- without a row is untriaged. Triaging a group also acknowledges each of
-- its standing flags, so a flag's own state stays the one truth of the
-- open list; a flag raised in the group later is open again, and the group
-- with it.
--
-- triage:
--   acknowledged  a person looked and it is known
--   invalid       not a real change (a noisy machine, a broken run)
--   expected      a real change that was meant (a trade-off, a new feature)
--   recovered     a later commit undid it: linked_commit_id is that commit
--   recovery      this commit undid an earlier group's change:
--                 linked_commit_id is the commit it undid
-- Judging writes recovered/recovery (judge/recoveries.h); people the others.
CREATE TABLE alert_groups (
  commit_id        INTEGER NOT NULL REFERENCES commits(id),
  testbed_id       INTEGER NOT NULL REFERENCES testbeds(id),
  triage           TEXT NOT NULL CHECK (triage IN ('acknowledged', 'invalid', 'expected', 'recovered', 'recovery')),
  reason           TEXT NOT NULL CHECK (reason <> ''),
  triaged_by       TEXT NOT NULL DEFAULT '',
  triaged_at       INTEGER NOT NULL,
  linked_commit_id INTEGER REFERENCES commits(id),
  PRIMARY KEY (commit_id, testbed_id),
  CHECK ((triage IN ('recovered', 'recovery')) = (linked_commit_id IS NOT NULL))
);

-- The band that judged: whether the band a comparison (or a point of an
-- experiment's evidence) was judged with was measured or the manifest's
-- default. It also names the test: with a measured band, a t-test on log run
-- medians pooled with the band's sigma; with the default, Welch's t-test
-- (analysis/compare.h). NULL: judged before this version (not known).
ALTER TABLE comparisons ADD COLUMN band_calibrated INTEGER CHECK (band_calibrated IN (0, 1));
ALTER TABLE experiment_evidence ADD COLUMN band_calibrated INTEGER CHECK (band_calibrated IN (0, 1));

-- A history reads, for each commit, its comparison at one cell (the band
-- that judged that point): one index seek, where the UNIQUE index (commit,
-- against, ...) would scan every comparison of the commit.
CREATE INDEX comparisons_of_cell ON comparisons(commit_id, testbed_id, variant, point_id);
