/**
 * The `agents` section of a worker's harness.config.json: per agent name, its instructions, model,
 * the worker's custom tools and the file's MCP servers it uses (by name), skills folders, policy,
 * limits and budget. Only the worker reads it (config/agents.ts); a session names an agent.
 */
import { z } from 'zod';
import { policySchemas } from '../deterministic/policy/schema';
import { budgetSchema } from './budget';
import { limitsSchema } from './limits';

/** An agent's name: what sessions name it by (`--agent`, `send(text, { agent })`). */
export const AGENT_NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/** At most this many characters of instructions: they start every model call of the agent's sessions. */
export const MAX_INSTRUCTIONS_CHARS = 100_000;

/** One agent of the config file. */
export const agentEntrySchema = z.strictObject({
  /** The system prompt of its sessions. */
  instructions: z.string().trim().min(1).max(MAX_INSTRUCTIONS_CHARS),
  /** A model name for the OpenAI-compatible endpoint, or `scripted:<file>` (relative to the file). */
  model: z.string().min(1),
  /** The worker's custom tools (defineTool) its sessions are offered, by name (default: none). */
  tools: z.array(z.string().min(1)).optional(),
  /** Servers of the file's `mcpServers` its sessions use, by name. */
  mcpServers: z.array(z.string().min(1)).optional(),
  /** Skills folders (relative to the file) its sessions may use, beside the project's skills/. */
  skills: z.array(z.string().min(1)).optional(),
  policy: policySchemas().policy.optional(),
  limits: limitsSchema.optional(),
  budget: budgetSchema.optional(),
  /** What a parent agent's model reads of it as a sub-agent (default: the start of its instructions). */
  description: z.string().trim().min(1).max(2000).optional(),
  /** Other agents of the worker it may hand tasks to (sub-agents, each offered as the tool `agent__<name>`); `{ "agent": name, "background": true }` runs one in the background. */
  agents: z.array(z.union([subAgentName(), z.strictObject({ agent: subAgentName(), background: z.boolean().optional() })])).optional(),
});

/** A sub-agent's name in an agent's `agents` (a name, or `{ "agent": name, "background": true }`). */
function subAgentName() {
  return z.string().regex(AGENT_NAME, 'agent names are letters, digits, - and _, a letter first (at most 64)');
}

/** The `agents` section: name → agent. */
export const agentsSchema = z.record(z.string().regex(AGENT_NAME, 'agent names are letters, digits, - and _, a letter first (at most 64)'), agentEntrySchema);

/** One agent as written in the file. */
export type AgentEntry = z.infer<typeof agentEntrySchema>;
