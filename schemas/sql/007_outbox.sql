-- perfwatch store, schema version 7: webhooks at least once; a commit given up on.
--
-- The outbox: every webhook message is a row, written in the same transaction
-- as the judging results it announces, before anything is sent. The daemon's
-- sender (daemon/webhook_outbox.h) POSTs the pending ones that are due, marks
-- each delivered (with when and after how many attempts) or, after a failed
-- attempt, sets when to try again; a message that fails max_attempts times is
-- marked failed with its last error. Delivered and failed messages are kept,
-- so `perfwatch query webhooks` and GET /api/v1/webhooks can list them. A
-- receiver de-duplicates on message_id: a message is posted again, with the
-- same id, when the daemon died between the POST and marking it delivered.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY,
  message_id      TEXT NOT NULL UNIQUE,   -- stable, random, sent with every attempt
  url             TEXT NOT NULL,          -- where it goes: the webhook configured when it was written
  event           TEXT NOT NULL,          -- the body's "event": regression, regression_withdrawn, ...
  flag_id         INTEGER REFERENCES flags(id),
  commit_sha      TEXT NOT NULL DEFAULT '',
  body_json       TEXT NOT NULL CHECK (json_valid(body_json)),
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  created_at      INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,       -- a pending message is due from then on
  last_attempt_at INTEGER,
  delivered_at    INTEGER,
  last_error      TEXT NOT NULL DEFAULT '',
  CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
  CHECK (state = 'pending' OR attempts > 0)
);
CREATE INDEX outbox_due ON outbox(next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX outbox_by_state ON outbox(state, id);

-- Job state 'gave_up': a job cut off max_attempts times (stops not counted)
-- is not redone by itself; it says so, with its attempts and why, until
-- someone re-queues it (`perfwatch jobs requeue`, POST
-- /api/v1/commits/{sha}/requeue). Before, such a job stayed 'cut_off' with
-- no job redoing it: those are the jobs given up on, and become 'gave_up'.
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with
-- every row and id kept (store/migrations.cpp applies a migration with
-- foreign keys off and checks them before it commits, so the rows of runs
-- and job_progress that refer to jobs stay as they are).
CREATE TABLE jobs_v7 (
  id             INTEGER PRIMARY KEY,
  repo_id        INTEGER NOT NULL REFERENCES repos(id),
  commit_sha     TEXT NOT NULL,
  branch         TEXT NOT NULL DEFAULT '',
  kind           TEXT NOT NULL CHECK (kind IN ('bench', 'noise', 'backfill')),
  state          TEXT NOT NULL DEFAULT 'queued'
                 CHECK (state IN ('queued', 'running', 'done', 'failed', 'cut_off', 'skipped', 'gave_up')),
  attempts       INTEGER NOT NULL DEFAULT 0,
  priority       INTEGER NOT NULL DEFAULT 0,
  options_json   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(options_json)),
  retry_of       INTEGER REFERENCES jobs(id),
  queue_position INTEGER,
  enqueued_at    INTEGER NOT NULL,
  started_at     INTEGER,
  finished_at    INTEGER,
  message        TEXT NOT NULL DEFAULT '',
  stops          INTEGER NOT NULL DEFAULT 0 CHECK (stops >= 0)
);
INSERT INTO jobs_v7 (id, repo_id, commit_sha, branch, kind, state, attempts, priority, options_json, retry_of,
                     queue_position, enqueued_at, started_at, finished_at, message, stops)
  SELECT j.id, j.repo_id, j.commit_sha, j.branch, j.kind,
         CASE WHEN j.state = 'cut_off' AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.retry_of = j.id)
              THEN 'gave_up' ELSE j.state END,
         j.attempts, j.priority, j.options_json, j.retry_of, j.queue_position, j.enqueued_at, j.started_at,
         j.finished_at,
         CASE WHEN j.state = 'cut_off' AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.retry_of = j.id)
              THEN 'gave up after ' || (j.attempts - j.stops) || ' attempt(s), each cut off (' || j.stops
                   || ' interruption(s) by a stop not counted): ' || j.message
              ELSE j.message END,
         j.stops
  FROM jobs j;
DROP TABLE jobs;
ALTER TABLE jobs_v7 RENAME TO jobs;
CREATE UNIQUE INDEX jobs_one_live
  ON jobs(repo_id, commit_sha, (CASE kind WHEN 'noise' THEN 'noise' ELSE 'bench' END))
  WHERE state IN ('queued', 'running');
CREATE INDEX jobs_by_commit ON jobs(repo_id, commit_sha);
CREATE INDEX jobs_claim_order ON jobs(priority DESC, coalesce(queue_position, id)) WHERE state = 'queued';
CREATE INDEX jobs_by_state ON jobs(state);
CREATE UNIQUE INDEX jobs_one_retry ON jobs(retry_of) WHERE retry_of IS NOT NULL;
