/** What `harness cost` does (cli/commands/cost.ts defines the command and loads this when it runs). */
import { loadLedger } from '../../lib/ledger/load';
import { ledgerJson, ledgerLines } from '../../lib/ledger/render';
import { currentPricing } from '../../lib/ledger/pricing';
import type { CliContext } from '../context';
import { print, printJson, say } from '../output';

export async function showCost(ctx: CliContext, id: string, o: { json?: boolean }): Promise<void> {
  const client = await ctx.client();
  const ledger = await loadLedger(client, id, { fallback: currentPricing(ctx.env, process.cwd()) });
  if (o.json) return printJson(ledgerJson(ledger));
  for (const note of ledger.notes) say(`note: ${note}`);
  print(ledgerLines(ledger.notes.length ? { ...ledger, notes: [] } : ledger).join('\n'));
}
