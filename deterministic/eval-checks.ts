/**
 * Judging an eval trial: each check against the turn's result, its call records and the files
 * of its workspace (read by the caller), then the reason and layer of a failure. Pure.
 */
import type { CheckResult, EvalCheck, FailureLayer, FailureReason } from './eval';
import type { TurnResult } from './session';
import type { ToolCallRecord } from './call-records';
import { re2Regex } from './policy/patterns';

/** What checks look at: the result, every call record, and the workspace files they name. */
export interface TrialFacts {
  result: Pick<TurnResult, 'answer' | 'terminated_by' | 'steps' | 'compressions' | 'error'>;
  calls: ToolCallRecord[];
  /** Contents of the files the checks name; absent = no such file. */
  files: Record<string, string | undefined>;
}

export function runCheck(check: EvalCheck, f: TrialFacts): CheckResult {
  const answer = f.result.answer ?? '';
  const fail = (detail: string): CheckResult => ({ check, passed: false, detail });
  const ok: CheckResult = { check, passed: true };
  const names = f.calls.map((c) => c.name);
  const errors = f.calls.flatMap((c) => (c.error_type ? [c.error_type] : []));
  switch (check.type) {
    case 'contains':
      return answer.toLowerCase().includes(check.value.toLowerCase()) ? ok : fail(`the answer does not contain "${check.value}": ${clip(answer)}`);
    case 'not_contains':
      return !answer.toLowerCase().includes(check.value.toLowerCase()) ? ok : fail(`the answer contains "${check.value}"`);
    case 'regex':
      // RE2: linear in the answer, which a model wrote; a backtracking pattern could stall the worker.
      return re2Regex(check.value).matcher(answer).find() ? ok : fail(`the answer does not match /${check.value}/: ${clip(answer)}`);
    case 'terminated_by':
      return f.result.terminated_by === check.value ? ok : fail(`terminated by ${f.result.terminated_by}`);
    case 'tool_called':
      return names.includes(check.name) ? ok : fail(`${check.name} was not called (called: ${[...new Set(names)].join(', ') || 'nothing'})`);
    case 'tool_not_called':
      return !names.includes(check.name) ? ok : fail(`${check.name} was called`);
    case 'error_type_seen':
      return errors.includes(check.value) ? ok : fail(`no ${check.value} (seen: ${[...new Set(errors)].join(', ') || 'none'})`);
    case 'error_type_not_seen':
      return !errors.includes(check.value) ? ok : fail(`${check.value} was seen`);
    case 'approval_requested': {
      const asked = f.calls.filter((c) => c.policy?.decision === 'ask' && (!check.name || c.name === check.name));
      return asked.length ? ok : fail(`no approval was requested${check.name ? ` for ${check.name}` : ''}`);
    }
    case 'file_exists':
      return f.files[check.path] !== undefined ? ok : fail(`${check.path} does not exist`);
    case 'file_contains': {
      const text = f.files[check.path];
      if (text === undefined) return fail(`${check.path} does not exist`);
      return text.includes(check.value) ? ok : fail(`${check.path} does not contain "${check.value}": ${clip(text)}`);
    }
    case 'max_steps':
      return f.result.steps <= check.value ? ok : fail(`${f.result.steps} steps`);
    case 'compressed': {
      const did = (f.result.compressions?.length ?? 0) > 0;
      return did === (check.value ?? true) ? ok : fail(did ? 'the context was compressed' : 'the context was not compressed');
    }
  }
}

/** Why a trial failed and in which layer: the first rule that applies. */
export function attribute(f: TrialFacts, checks: CheckResult[]): { reason: FailureReason; layer: FailureLayer; detail: string } {
  const failed = checks.filter((c) => !c.passed);
  const detail = failed.map((c) => `${c.check.type}: ${c.detail ?? ''}`).join('; ') || `terminated by ${f.result.terminated_by}`;
  const seen = (t: string) => f.calls.some((c) => c.error_type === t);
  // A failure that the model fixed later (the same tool succeeded afterwards) is not the reason.
  const unrecovered = (t: string) => {
    const last = [...f.calls].reverse().find((c) => c.error_type === t);
    return last !== undefined && !f.calls.some((c) => c.name === last.name && c.ok && c.step > last.step);
  };
  const t = f.result.terminated_by;
  if (t === 'failed') return { reason: 'MODEL_UNAVAILABLE', layer: 'environment', detail: f.result.error ?? detail };
  if (t === 'max_steps') return { reason: 'MAX_STEPS_EXCEEDED', layer: 'model', detail };
  if (t === 'repeated_action') return { reason: 'REPEATED_ACTION', layer: 'model', detail };
  // The session's limits.budget stopped it (a trial has nobody to raise it).
  if (t === 'budget_exceeded') return { reason: 'BUDGET_EXCEEDED', layer: 'harness', detail: f.result.answer };
  if (failed.some((c) => c.check.type === 'tool_called' || c.check.type === 'tool_not_called')) return { reason: 'TOOL_SELECTION_ERROR', layer: 'model', detail };
  if (unrecovered('INVALID_ARGUMENTS')) return { reason: 'INVALID_ARGUMENTS', layer: 'model', detail };
  if (unrecovered('FILE_NOT_FOUND')) return { reason: 'FILE_NOT_FOUND_UNRECOVERED', layer: 'model', detail };
  if (seen('COMMAND_TIMEOUT')) return { reason: 'COMMAND_TIMEOUT', layer: 'tool', detail };
  if (seen('SANDBOX_UNAVAILABLE') || seen('MCP_SERVER_UNAVAILABLE') || seen('MEMORY_UNAVAILABLE')) return { reason: 'TOOL_UNAVAILABLE', layer: 'environment', detail };
  if (seen('PERMISSION_DENIED') || seen('APPROVAL_DENIED')) return { reason: 'PERMISSION_DENIED', layer: 'harness', detail };
  const answerCheck = failed.some((c) => ['contains', 'not_contains', 'regex'].includes(c.check.type));
  if (answerCheck && (f.result.compressions?.length ?? 0) > 0) return { reason: 'CONTEXT_LOSS', layer: 'harness', detail };
  if (answerCheck) return { reason: 'FINAL_ANSWER_INCOMPLETE', layer: 'model', detail };
  // Any other failed check (a file the turn did not write as asked, a step count, an approval
  // never asked) is the reason itself: its detail names it and what was found.
  if (failed.length) return { reason: 'CHECK_FAILED', layer: 'model', detail };
  return { reason: 'UNKNOWN', layer: 'model', detail };
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
