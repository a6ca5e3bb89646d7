/**
 * Which calls of a step run together. A step's calls run in the order the model gave them, but
 * consecutive calls that are all safe to run together (the tool's `parallel`: the built-in
 * reads, MCP tools the server marks read-only, custom tools declared `parallel`) run at the same
 * time; any other call runs alone, after the calls before it and before the calls after it, so a
 * read that follows a write still sees it. Whatever order they finish in, their results are
 * taken in call order. Pure and deterministic (the turn workflow groups with it).
 */
import type { ToolDefinition } from './tools';

/** Whether a call of this tool may run at the same time as the step's other such calls (never a tool the workflow runs itself). */
export function runsTogether(def: Pick<ToolDefinition, 'parallel' | 'runsIn'> | undefined): boolean {
  return def?.parallel === true && def.runsIn !== 'workflow';
}

/**
 * The step's items in runs, in order: a maximal run of consecutive items `together` holds for is
 * one group, and every other item is a group of its own. Concatenated, the groups are `items`.
 */
export function callGroups<T>(items: readonly T[], together: (item: T) => boolean): T[][] {
  const groups: T[][] = [];
  let open: T[] | undefined;
  for (const item of items) {
    if (!together(item)) {
      open = undefined;
      groups.push([item]);
    } else if (open) {
      open.push(item);
    } else {
      open = [item];
      groups.push(open);
    }
  }
  return groups;
}
