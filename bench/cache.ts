/**
 * bench:cache — what a stable prompt prefix saves on a real server: a 10-step turn against
 * llama-server (SmolLM2-135M, one slot, its KV cache on as it is by default) with the harness's
 * layout (the system message and the tools a fixed prefix, memory after the conversation), and
 * the same turn with a prefix that changes every step (the baseline: memory in the system message,
 * as runs before the `cache-prefix` patch send it, with a fact saved at every step). The turn runs
 * through runTurn, so the messages are the ones the harness builds; the model's replies are
 * scripted (a 135M model calls tools too unreliably to repeat a turn) and each request asks the
 * server for a few tokens, so its prompt processing is what is measured. The tools go in the
 * system message as the harness's text mode writes them, which is how the harness offers this
 * model its tools. Per step: llama-server's timings.prompt_ms, and the share of prompt tokens its
 * cache served (timings.cache_n, read as the harness records it: activities/model/usage.ts).
 */
import os from 'node:os';
import { builtinRegistry } from '../deterministic/builtin-tools';
import type { ModelReply } from '../deterministic/activity-types';
import { parsePolicy } from '../deterministic/policy/schema';
import { DEFAULT_LIMITS } from '../deterministic/session-config';
import type { TurnInput } from '../deterministic/session';
import type { ChatMessage } from '../deterministic/types';
import { DEFAULT_SYSTEM_PROMPT } from '../config/resolve';
import { providerUsage } from '../activities/model/usage';
import { textModeMessages } from '../activities/text-tools/render';
import { runTurn } from '../workflows/turn/loop';
import { startLocalModel, LOCAL_MODEL } from '../scripts/local-model';
import { runScript } from '../scripts/scratch';
import { fmt, median } from './stats';

const STEPS = 10;
/** Turns of each layout (BENCH_ROUNDS, default 3), alternated (which goes first too). */
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 3;
/**
 * llama-server's threads (BENCH_THREADS, default 1): its threads wait for each other at every layer,
 * so two of them on two cores that other work shares stall far more than one does.
 */
const THREADS = Number(process.env.BENCH_THREADS) || 1;
/** Targets: prompt processing at least this many times lower than the baseline, and this share cached from step 2 on. */
const TARGET_RATIO = 2;
const TARGET_CACHED = 0.8;

type Layout = 'harness' | 'baseline';

/** What the server said of one request. */
interface StepFigures {
  step: number;
  promptMs: number;
  promptTokens: number;
  cachedTokens: number;
}

const SKILLS = [
  '## Skills',
  'Skills are ready-made instructions and scripts for specific tasks. When a task matches one, first call use_skill with its name to read its instructions.',
  '- changelog: write the changelog entry of a release from its merged pull requests',
  '- deploy: build, tag and deploy a service to staging, then to production after checks',
  '- triage: label and route new issues by component, severity and reproducibility',
].join('\n');

/** A tool result of a realistic size: a listing the model reads (about 150 tokens). */
function listing(step: number): string {
  return Array.from({ length: 8 }, (_, i) => `src/module-${step}-${i}.ts  ${1200 + 37 * i} bytes  exports parse${i}, render${i}`).join('\n');
}

/** Step i (before the last): list a folder and save what was found; the last step answers. */
function scriptedReply(step: number): ModelReply {
  const base = { usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, model: LOCAL_MODEL, attempt: 1, latencyMs: 0 };
  if (step === STEPS) return { ...base, content: 'All modules are listed and noted.', toolCalls: [] };
  return {
    ...base,
    content: null,
    toolCalls: [
      { id: `c${step}a`, name: 'list_files', arguments: JSON.stringify({ path: `src/part-${step}` }) },
      { id: `c${step}b`, name: 'remember', arguments: JSON.stringify({ key: `part_${step}`, value: `8 modules, parse/render pairs, largest ${1200 + 37 * 7} bytes` }) },
    ],
  };
}

/** One request to llama-server: a few tokens asked for, its timings read back. */
async function ask(url: string, messages: ChatMessage[], step: number): Promise<StepFigures> {
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: LOCAL_MODEL, messages, max_tokens: 4, temperature: 0 }),
  });
  if (!res.ok) throw new Error(`llama-server answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const body = (await res.json()) as { usage: { prompt_tokens: number }; timings?: { prompt_ms?: number } };
  const usage = providerUsage(body.usage, body);
  return { step, promptMs: body.timings?.prompt_ms ?? NaN, promptTokens: usage.prompt_tokens, cachedTokens: usage.cached_tokens ?? 0 };
}

/** One 10-step turn in the given layout; the server's figures for each step. */
async function turn(url: string, layout: Layout, round: number): Promise<StepFigures[]> {
  const specs = builtinRegistry().specs();
  const figures: StepFigures[] = [];
  const sessionId = `cache-${layout}-${round}`;
  const input: TurnInput = {
    sessionId,
    turn: 1,
    turnId: `${sessionId}/turn-1`,
    config: { model: { provider: 'openai', model: LOCAL_MODEL, baseUrl: url }, systemPrompt: DEFAULT_SYSTEM_PROMPT, limits: { ...DEFAULT_LIMITS, maxSteps: STEPS, repeatLimit: 1000 } },
    history: [],
    memory: {},
    // A different task each round, so no round starts from the one before's cache beyond the prefix.
    userMessage: `Round ${round}: list every part under src/ and note what each holds.`,
    modelCallBase: 0,
  };
  const result = await runTurn(
    input,
    {
      callModel: async (req) => {
        const tools = specs.filter((s) => req.tools.includes(s.name));
        figures.push(await ask(url, textModeMessages(req.messages ?? [], tools), req.step));
        return scriptedReply(req.step);
      },
      executeTool: async (call) => ({ ok: true, result: { path: (call.args as { path?: string }).path, entries: listing(call.step) } }),
      askUser: async () => undefined,
      awaitApprovals: async () => new Map(),
      cachePrefix: () => layout === 'harness',
    },
    { policy: parsePolicy(undefined), context: { skillsIndex: SKILLS } },
  );
  if ('continueAsNew' in result || result.steps !== STEPS) throw new Error(`the ${layout} turn did not run ${STEPS} steps`);
  return figures;
}

/** Medians of steps 2 to 10 of the counted rounds: prompt time, and the share of prompt tokens cached. */
function summary(all: StepFigures[][]): { promptMs: number; cachedShare: number; perStepShare: number; promptTokens: number; step1Ms: number } {
  const later = all.flatMap((t) => t.filter((s) => s.step > 1));
  const cached = later.reduce((n, s) => n + s.cachedTokens, 0);
  const prompt = later.reduce((n, s) => n + s.promptTokens, 0);
  return {
    promptMs: median(later.map((s) => s.promptMs)),
    cachedShare: prompt ? cached / prompt : 0,
    perStepShare: median(later.map((s) => (s.promptTokens ? s.cachedTokens / s.promptTokens : 0))),
    promptTokens: median(later.map((s) => s.promptTokens)),
    step1Ms: median(all.map((t) => t.find((s) => s.step === 1)?.promptMs ?? NaN)),
  };
}

async function main(): Promise<void> {
  const model = await startLocalModel({ temp: 0, parallel: 1, context: 8192, threads: THREADS });
  const counted: Record<Layout, StepFigures[][]> = { harness: [], baseline: [] };
  try {
    // A first request loads the model's weights into memory; it is not counted.
    await ask(model.url, [{ role: 'user', content: 'hello' }], 0);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const layout of round % 2 ? (['harness', 'baseline'] as const) : (['baseline', 'harness'] as const)) counted[layout].push(await turn(model.url, layout, round));
    }
  } finally {
    await model.close();
  }
  const h = summary(counted.harness);
  const b = summary(counted.baseline);
  const ratio = b.promptMs / h.promptMs;
  const load = os.loadavg().map((l) => fmt(l)).join(' ');
  console.log(`bench:cache — a ${STEPS}-step turn against llama-server (SmolLM2-135M, one slot, ${THREADS} thread${THREADS === 1 ? '' : 's'}), ${ROUNDS} turns of each layout, alternated; steps 2-${STEPS}; nproc ${os.availableParallelism()}, load ${load}`);
  const line = (name: string, s: typeof h) =>
    `  ${name} median prompt processing ${fmt(s.promptMs, 1)} ms a step (step 1: ${fmt(s.step1Ms, 1)} ms), ${fmt(s.promptTokens, 0)} prompt tokens, ${fmt(100 * s.cachedShare, 1)} % of prompt tokens cached (median step ${fmt(100 * s.perStepShare, 1)} %)`;
  console.log(line('harness layout:             ', h));
  console.log(line('baseline (prefix changes):  ', b));
  console.log(`  baseline / harness prompt processing: ${fmt(ratio)}x (target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? 'met' : 'missed'}); cached from step 2 on: ${fmt(100 * h.cachedShare, 1)} % (target >= ${100 * TARGET_CACHED} %: ${h.cachedShare >= TARGET_CACHED ? 'met' : 'missed'})`);
  const json = (s: typeof h) => ({ promptMs: Number(fmt(s.promptMs, 1)), step1Ms: Number(fmt(s.step1Ms, 1)), promptTokens: s.promptTokens, cachedShare: Number(fmt(s.cachedShare, 3)), medianStepShare: Number(fmt(s.perStepShare, 3)) });
  console.log(JSON.stringify({ bench: 'cache', steps: STEPS, rounds: ROUNDS, nproc: os.availableParallelism(), load: os.loadavg(), harness: json(h), baseline: json(b), ratio: Number(fmt(ratio)) }));
}

runScript(main);
