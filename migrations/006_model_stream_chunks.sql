-- Model replies' text as it streams: the pieces a worker stores while a model call runs, so a
-- client anywhere that reaches this database (HarnessClient.events, the CLI's live lines) shows
-- the text as it arrives, on any machine. Best effort and short-lived: the finished reply is in
-- the turn's history; workers delete rows older than a few hours (activities/model/stream-writer.ts).
-- Readers wake on NOTIFY harness_model_stream (payload: the turn id) instead of polling.

-- One stored piece of one model call; `seq` counts on across the call's attempts (a request
-- sent again starts its text over under a higher `attempt`). Bytes, not text: a text column
-- refuses the NUL character, which a reply may hold.
CREATE TABLE IF NOT EXISTS model_stream_chunks (
  turn_id text NOT NULL,
  step integer NOT NULL,
  call_index integer NOT NULL,
  seq integer NOT NULL,
  session_id text NOT NULL,
  attempt integer NOT NULL,
  body bytea NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (turn_id, step, call_index, seq)
);

-- The sweep of stale rows, and a session's purge.
CREATE INDEX IF NOT EXISTS model_stream_chunks_at_idx ON model_stream_chunks (at);
CREATE INDEX IF NOT EXISTS model_stream_chunks_session_idx ON model_stream_chunks (session_id);
