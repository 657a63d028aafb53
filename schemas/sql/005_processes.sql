-- perfwatch store, schema version 5: who owns what is running.
--
-- A run in progress names the process that runs it (pid, start time since
-- boot, boot id, host): a run whose owner no longer lives is cut off by the
-- next perfwatch to open the database; a run whose owner lives is left alone.
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_host TEXT;

-- The process groups perfwatch started (a build, a bench), recorded while
-- they run so that the next start can end what a killed perfwatch left. A
-- group is named by its leader (pgid = leader pid) and the leader's start
-- time, so a pid recycled since is never signalled. The row goes when the
-- group has ended.
CREATE TABLE child_groups (
  id                 INTEGER PRIMARY KEY,
  pgid               INTEGER NOT NULL CHECK (pgid > 1),
  start_ticks        INTEGER NOT NULL,
  boot_id            TEXT NOT NULL,
  host               TEXT NOT NULL,
  owner_pid          INTEGER NOT NULL,
  owner_start_ticks  INTEGER NOT NULL,
  what               TEXT NOT NULL,          -- "build of 3f2a9c1e05", "bench of run 12"
  run_id             INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  started_at         INTEGER NOT NULL
);
CREATE INDEX child_groups_by_host ON child_groups(host, boot_id);

-- Interruptions of a job by a stop request (SIGTERM): they do not count as
-- attempts (attempts - stops is what max_attempts limits).
ALTER TABLE jobs ADD COLUMN stops INTEGER NOT NULL DEFAULT 0 CHECK (stops >= 0);

-- "pwdb": a file with another application_id is not perfwatch's and is
-- refused before anything is written to it.
PRAGMA application_id = 1886872674;
