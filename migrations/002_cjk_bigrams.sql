-- Chinese, Japanese and Korean words are mostly two characters and the text has no spaces:
-- a query like 简洁回答 must find 简洁的回答, where neither trigram windows nor the default
-- full-text parser (one token per run) match. Index overlapping character bigrams of each
-- CJK run (the method of pg_bigm), as a tsvector so a plain GIN index serves it.
CREATE OR REPLACE FUNCTION memory_cjk_bigrams(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_to_tsvector(array_agg(DISTINCT substr(r[1], i, 2))), ''::tsvector)
  FROM regexp_matches(lower(t), '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+', 'g') AS r,
       generate_series(1, greatest(char_length(r[1]) - 1, 1)) AS i
$$;

ALTER TABLE memories ADD COLUMN IF NOT EXISTS cjk tsvector GENERATED ALWAYS AS (memory_cjk_bigrams(text)) STORED;

CREATE INDEX IF NOT EXISTS memories_cjk_idx ON memories USING gin (cjk);
