/**
 * The libraries every workflow on a workflow thread shares: the bundle preloads this module
 * (machine/workflow-bundle.ts), so zod, re2js and the policy's program tables are evaluated once
 * per thread instead of once per workflow, and their exports are frozen. All are pure: their
 * module scope holds no state of a workflow (the tables' one cache, getopt's long names of a
 * spec, is a function of its key). Each is named by a value so that the bundler keeps it (the
 * libraries are marked free of side effects, and an import whose value nothing uses is dropped).
 * The program tables were about 4 ms of every workflow's start (building the option tables).
 */
import { z } from 'zod';
import { RE2JS } from 're2js';
import { notReadOnlyExact } from './policy/programs';

// zod writes its global config (the default locale, the containers' memoizer) when its first
// schema is built; built here, before the freeze, so no workflow writes it afterwards.
z.object({ warm: z.string() });

export const SHARED_LIBRARIES = { zod: typeof z.object, re2js: typeof RE2JS.compile, programs: typeof notReadOnlyExact } as const;
