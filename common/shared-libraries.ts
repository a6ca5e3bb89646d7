/**
 * The libraries every workflow on a workflow thread shares: the bundle preloads this module
 * (host/workflow-bundle.ts), so zod and re2js are evaluated once per thread instead of once per
 * workflow, and their exports are frozen. Both are pure: their module scope holds no state of a
 * workflow. Each is named by a value so that the bundler keeps it (both are marked free of side
 * effects, and an import whose value nothing uses is dropped).
 */
import { z } from 'zod';
import { RE2JS } from 're2js';

// zod writes its global config (the default locale, the containers' memoizer) when its first
// schema is built; built here, before the freeze, so no workflow writes it afterwards.
z.object({ warm: z.string() });

export const SHARED_LIBRARIES = { zod: typeof z.object, re2js: typeof RE2JS.compile } as const;
