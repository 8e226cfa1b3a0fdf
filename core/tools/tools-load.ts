/**
 * `tools.load`: the model asks for the full schemas of tools it was shown only by name (deferred
 * tools, core/tool-offer.ts). It runs nothing and grants nothing: the turn workflow answers it from
 * the tools the turn's effective capabilities already grant, and from the next model step on those
 * tools are offered whole. Its scope is the model's own (`llm.call`); the workflow never schedules it.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { says } from './fields.js';

/** The tool's id. */
export const TOOLS_LOAD = 'tools.load';

/** How many tools one call may load (more than any tier grants). */
export const TOOLS_LOAD_MAX = 40;

/** Validated input of `tools.load`: catalog ids (a wire name such as `mission__create` is read as `mission.create`). */
export interface ToolsLoadInput {
  tools: string[];
}

const nameRefusal = says('"tools" must list tool names from the index, e.g. ["mission.create"]');

export const toolsLoadTool = defineTool({
  id: TOOLS_LOAD,
  // The index of loadable tools is appended per turn (core/tool-offer.ts `toolsLoadSpec`).
  description: 'Load tools listed below before their first use; their full schemas come with your next step.',
  input: () =>
    z.strictObject({
      tools: z
        .array(z.string({ error: nameRefusal }).regex(/^[a-z][a-z0-9_.]{0,63}$/, { error: nameRefusal }), { error: nameRefusal })
        .min(1, { error: nameRefusal })
        .max(TOOLS_LOAD_MAX, { error: nameRefusal }),
    }),
  canonical: ({ tools }): ToolsLoadInput => ({ tools: [...new Set(tools.map((t) => t.replace(/__/g, '.')))] }),
  scope: { base: 'llm.call' },
  idempotency: 'natural',
  provenance: { output: 'trusted', effect: false },
});
