-- An eval's trial reports, kept in the store as each trial ends instead of in the eval workflow's
-- memory and history (workflows/eval/eval.ts): the workflow continues as new every few hundred
-- trials and returns the totals with a reference, and `harness eval` reads the reports back from
-- here. One row per trial, under the trial's own session, so purging that session (or `sessions
-- prune`) deletes its report with everything else it stored.

CREATE TABLE IF NOT EXISTS eval_trials (
  session_id text PRIMARY KEY,
  eval_id text NOT NULL,
  case_id text NOT NULL,
  trial integer NOT NULL,
  -- The TrialReport as JSON; bytes, not jsonb or text: an answer may hold the NUL character.
  report bytea NOT NULL
);

CREATE INDEX IF NOT EXISTS eval_trials_eval_idx ON eval_trials (eval_id);
