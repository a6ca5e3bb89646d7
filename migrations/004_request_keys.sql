-- Idempotent writes: remember_longterm records the tool call that made the memory (its turn
-- and call id). A retried activity, or a retry after a write that timed out on the client but
-- still landed on the server, then finds the row already there instead of adding a second one.
-- Partial: memories written outside a tool call (imports, tests) have no key and never conflict.
ALTER TABLE memories ADD COLUMN IF NOT EXISTS request_key text;

CREATE UNIQUE INDEX IF NOT EXISTS memories_request_key_idx ON memories (namespace, request_key) WHERE request_key IS NOT NULL;
