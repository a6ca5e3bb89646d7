-- The message store: conversation messages and other large values (tool arguments and
-- results, the system text, scripted-model scripts) written once, content-addressed, so that
-- workflow histories hold hashes instead of texts. Everything is keyed by session first: a
-- session's rows are found (and purged) through the primary keys' prefix, and the same body
-- in two sessions is two rows, so deleting one session never touches another's data.

-- Bodies are bytes (the UTF-8 of the text): a text column refuses the NUL character, which a
-- tool result or a script may hold. `bytes` is their size, for accounting without detoasting.
CREATE TABLE IF NOT EXISTS message_blobs (
  session_id text NOT NULL,
  hash text NOT NULL,
  body bytea NOT NULL,
  bytes integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, hash)
);

-- One link of a hash chain: the message `blob` follows the node `parent` (null at the root).
-- No foreign keys: batches are written idempotently in any order, and a missing link is found
-- where it matters, when a chain is read (readChain names it).
CREATE TABLE IF NOT EXISTS message_nodes (
  session_id text NOT NULL,
  hash text NOT NULL,
  parent text,
  blob text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, hash)
);

-- The last write of each session, so retention finds idle sessions by an index instead of
-- aggregating every row of both tables (millions, with their bodies) under a statement timeout.
CREATE TABLE IF NOT EXISTS message_sessions (
  session_id text PRIMARY KEY,
  last_write timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS message_sessions_last_write_idx ON message_sessions (last_write);
