-- Typo tolerance without scanning memories: word_similarity against whole texts costs tens of
-- microseconds per row and common words match thousands of rows. Following the pg_trgm docs,
-- keep the distinct words in a small table with a trigram index, correct the query's words
-- against it, and search the memories with the corrected words through the full-text index.
CREATE TABLE IF NOT EXISTS memory_words (word text PRIMARY KEY);

CREATE INDEX IF NOT EXISTS memory_words_trgm_idx ON memory_words USING gin (word gin_trgm_ops);

-- Same tokens the recall planner makes fuzzy: lower-case runs of letters/digits, 3 to 40
-- long, not only digits, not CJK (those are served by the bigrams of migration 002).
CREATE OR REPLACE FUNCTION memory_words_of(t text) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT w FROM regexp_split_to_table(lower(t), '[^[:alnum:]]+') AS w
  WHERE char_length(w) BETWEEN 3 AND 40 AND w !~ '^[0-9]+$'
    AND w !~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'
$$;

-- Statement-level with a transition table so bulk inserts add their words in one pass.
CREATE OR REPLACE FUNCTION memory_words_collect() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_words (word)
  SELECT DISTINCT memory_words_of(text) FROM new_rows
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS memories_collect_words ON memories;
CREATE TRIGGER memories_collect_words AFTER INSERT ON memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_words_collect();

INSERT INTO memory_words (word) SELECT DISTINCT memory_words_of(text) FROM memories ON CONFLICT DO NOTHING;
