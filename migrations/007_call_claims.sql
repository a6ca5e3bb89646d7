-- Claims of calls that must not run twice: custom tools that are not idempotent, and
-- http_request's POST, PUT, PATCH and DELETE (activities/tools/at-most-once.ts). A row is
-- inserted before the call runs, so an attempt on any worker that reaches this database, on any
-- host, finds it and does not run the call again; the call's result is written into the row
-- once there is one, and a later attempt returns it. Rows go when their session ends or is purged.

CREATE TABLE IF NOT EXISTS call_claims (
  session_id text NOT NULL,
  -- `<turnId>/<callId>`
  key text NOT NULL,
  -- The attempt that claimed it: host and process, for the message of an attempt that finds it unfinished.
  claimed_by text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  -- The result as JSON; bytes, not jsonb or text: a tool's result may hold the NUL character.
  result bytea,
  PRIMARY KEY (session_id, key)
);
