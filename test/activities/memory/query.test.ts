import { describe, expect, it } from 'vitest';
import { planQuery } from '../../../activities/memory/query';

describe('planQuery', () => {
  it('splits spaced words into an OR full-text query and fuzzy terms without stopwords', () => {
    expect(planQuery('What database did we choose?')).toEqual({
      tsquery: 'what | database | did | we | choose',
      fuzzyTerms: ['database', 'choose'],
      plainWords: ['what', 'did', 'we'],
      bigrams: [],
      patterns: [],
    });
  });

  it('turns Chinese runs into overlapping bigrams, single characters into patterns', () => {
    expect(planQuery('数据库')).toMatchObject({ bigrams: ['数据', '据库'], patterns: [] });
    expect(planQuery('简洁回答，库')).toMatchObject({ bigrams: ['简洁', '洁回', '回答'], patterns: ['%库%'] });
    expect(planQuery('PostgreSQL 数据').tsquery).toBe('postgresql');
    expect(planQuery('100%_done').tsquery).toBe('100 | done');
  });

  it('returns nothing to search for when the query has no letters or digits', () => {
    expect(planQuery('%%% !!!')).toEqual({ tsquery: null, fuzzyTerms: [], plainWords: [], bigrams: [], patterns: [] });
  });
});
