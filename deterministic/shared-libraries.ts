/**
 * The libraries every workflow on a workflow thread shares: the bundle preloads this module
 * (machine/workflow-bundle.ts), so zod, re2js and the policy's program tables are evaluated once
 * per thread instead of once per workflow, and their exports are frozen. All are pure: their
 * module scope holds no state of a workflow (the tables' one cache, getopt's long names of a
 * spec, is a function of its key). So is the shell parser, unbash: its module scope is constant
 * tables, and each parse builds a lexer and parser of its own (shared-parser-frozen.test.ts
 * parses the policy corpus frozen as workflows share it). Each is named by a value so that the
 * bundler keeps it (the libraries are marked free of side effects, and an import whose value
 * nothing uses is dropped).
 * The program tables were about 4 ms of every workflow's start (building the option tables); the
 * parser's 18 modules about 0.6 ms of every turn's (bench:eval's profile).
 */
import { z } from 'zod';
import { RE2JS } from 're2js';
import { parse } from 'unbash';
import { notReadOnlyExact } from './policy/programs';

// zod writes its global config (the default locale, the containers' memoizer) when its first
// schema is built; built here, before the freeze, so no workflow writes it afterwards.
z.object({ warm: z.string() });

export const SHARED_LIBRARIES = { zod: typeof z.object, re2js: typeof RE2JS.compile, programs: typeof notReadOnlyExact, unbash: typeof parse } as const;
