/** What `harness cost` does (cli/commands/cost.ts defines the command and loads this when it runs). */
import { loadLedger } from '../../history/ledger/load';
import { ledgerJson, ledgerLines, moneyText } from '../../history/ledger/render';
import type { Ledger } from '../../history/ledger/types';
import type { Client } from '@temporalio/client';
import type { CliContext } from '../context';
import { print, printJson, say } from '../output';

export async function showCost(ctx: CliContext, id: string, o: { json?: boolean; calls?: boolean }): Promise<void> {
  const client = await ctx.client();
  // Prices of sessions from before prices come from the config (zod): loaded here, not by `status`.
  const { currentPricing } = await import('../../config/session-prices');
  const ledger = await loadLedger(client, id, { fallback: currentPricing(ctx.env, process.cwd()), ...(o.calls ? { calls: true } : {}) });
  if (o.json) return printJson(ledgerJson(ledger));
  for (const note of ledger.notes) say(`note: ${note}`);
  print(ledgerLines(ledger.notes.length ? { ...ledger, notes: [] } : ledger).join('\n'));
}

/** A session's ledger for `status`, or why it could not be read (the status stands without it). */
export async function sessionCost(client: Client, sessionId: string): Promise<{ ledger?: Ledger; problem?: string }> {
  try {
    return { ledger: await loadLedger(client, sessionId) };
  } catch (err) {
    return { problem: `the cost could not be read: ${(err as Error).message.split('\n')[0]}` };
  }
}

/** `cost $0.0123 · 12,345 tokens: 5 model calls, 1 compression, 2 wasted attempts (harness cost <id>)`. */
export function costLine(l: Ledger, id: string): string {
  const k = l.byKind;
  const parts = [`${k.model.calls} model call${k.model.calls === 1 ? '' : 's'}`];
  if (k.compression.calls) parts.push(`${k.compression.calls} compression${k.compression.calls === 1 ? '' : 's'}`);
  if (k.correction.calls) parts.push(`${k.correction.calls} correction${k.correction.calls === 1 ? '' : 's'}`);
  if (k.retry_waste.calls) parts.push(`${k.retry_waste.calls} wasted attempt${k.retry_waste.calls === 1 ? '' : 's'}`);
  return `cost ${moneyText(l.total)} · ${l.total.total_tokens} tokens: ${parts.join(', ')} (\`harness cost ${id}\` for the breakdown)`;
}

/** The ledger's total and headings, as `status --json` shows them. */
export function ledgerSummaryJson(l: Ledger) {
  const { total, by_kind, priced } = ledgerJson(l);
  return { ...total, priced, by_kind };
}
