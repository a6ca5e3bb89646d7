-- Long-term memory: one row per remembered text, scoped by namespace (user, project, eval case).
-- pg_trgm finds text without spaces (Chinese, Japanese) and misspellings, which full-text search
-- alone cannot: the default parser treats a whole run of CJK characters as one token.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE IF NOT EXISTS memories (
  id bigserial PRIMARY KEY,
  namespace text NOT NULL,
  session_id text,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- 'english' stems ("decided" finds "decide"); the regconfig argument keeps it immutable.
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);

CREATE INDEX IF NOT EXISTS memories_tsv_idx ON memories USING gin (tsv);
CREATE INDEX IF NOT EXISTS memories_text_trgm_idx ON memories USING gin (text gin_trgm_ops);
CREATE INDEX IF NOT EXISTS memories_namespace_created_idx ON memories (namespace, created_at DESC);
