-- perfwatch store, schema version 4: names that say the statistic.
--
-- A commit's pooled value at a point is the geometric mean of its runs'
-- medians (analysis::commit_value: the statistic commits are compared by),
-- not a median; its column says so. Its ci_low/ci_high are the 95% CI of
-- that geometric mean (a t interval on the log run medians). A run's own
-- value (summaries.median, the median of its trials) keeps its name.
ALTER TABLE commit_summaries RENAME COLUMN median TO geomean_of_run_medians;

-- job_progress.detail_json keeps its layout; since this version the daemon
-- writes it as the typed record of schemas/store/job_progress.schema.json
-- (store/job_progress_store.h), and rows written before still read.
