/**
 * Turns a free-text recall query into the pieces the SQL needs: an OR full-text query for
 * spaced scripts, fuzzy terms for trigram word similarity (typos, "postgres" vs
 * "PostgreSQL"), and character bigrams for scripts written without spaces (CJK).
 */

/** What recall searches for. */
interface RecallPlan {
  /** OR of the words for to_tsquery('english', …); null when the query has no spaced words. */
  tsquery: string | null;
  /** Words (≥ 3 chars, not stopwords), expanded with known spellings through the trigram index. */
  fuzzyTerms: string[];
  /** The other words (short ones, stopwords): searched as they are. */
  plainWords: string[];
  /** Bigrams of the CJK runs, matched against the `cjk` column (migration 002). */
  bigrams: string[];
  /** ILIKE patterns for single-character CJK runs, which have no bigram. */
  patterns: string[];
}

// Scripts written without spaces: the default text-search parser sees a whole run as one token.
// The same ranges as memory_cjk_bigrams() in migrations/002, so query and index agree.
const NO_SPACE_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+/gu;
const WORD = /[\p{L}\p{N}]+/gu;
// Short enough to scan: each term adds an index arm to the query.
const MAX_FUZZY = 8;
const MAX_BIGRAMS = 16;
// Trigram similarity of these with any text is high and tells nothing; full-text drops them too.
const STOPWORDS = new Set(
  'the and for with what that this did does was were are have has had how which who whom why when where our your you we they them their its from into about not but all any can could should would will just than then there here some been being very also more most out over under only own same such too'.split(' '),
);

/** Escapes LIKE wildcards so user text matches literally. */
function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Overlapping 2-character pieces of a run (most CJK words are one or two of them). */
function bigrams(run: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 2 <= run.length; i++) out.push(run[i]! + run[i + 1]!);
  return out;
}

/** Keeps at most n items spread evenly, so a long query still covers its whole length. */
function spread<T>(items: T[], n: number): T[] {
  if (items.length <= n) return items;
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]!);
}

function isFuzzy(w: string): boolean {
  return [...w].length >= 3 && !STOPWORDS.has(w);
}

/** Builds the recall plan for a query. */
export function planQuery(query: string): RecallPlan {
  const text = query.normalize('NFKC').toLowerCase();
  const runs = [...text.matchAll(NO_SPACE_RUN)].map((m) => [...m[0]]);
  const spaced = text.replace(NO_SPACE_RUN, ' ');
  const words = [...new Set([...spaced.matchAll(WORD)].map((m) => m[0]))];
  const grams = [...new Set(runs.flatMap(bigrams))];
  const singles = [...new Set(runs.filter((r) => r.length === 1).map((r) => r[0]!))];
  return {
    // Only letters and digits reach to_tsquery, so no user text can break its syntax.
    tsquery: words.length > 0 ? words.join(' | ') : null,
    fuzzyTerms: words.filter(isFuzzy).slice(0, MAX_FUZZY),
    plainWords: words.filter((w) => !isFuzzy(w)).slice(0, MAX_FUZZY),
    bigrams: spread(grams, MAX_BIGRAMS),
    patterns: singles.map((c) => `%${likeLiteral(c)}%`),
  };
}
