/**
 * docs/SECURITY.md's table of authority and content fields says what the catalog says: it is written
 * from each governed tool's input fields and `provenance` (core/tools/*.ts), and a tool whose fields
 * change without the table fails here, with the row to write.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { taintGoverns } from '../../core/taint.js';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';
import type { ToolDefinition } from '../../core/tools/define-tool.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const HEADER = "| tool | kind | authority fields (must be the owner's after untrusted content) | content fields (may hold anything) |";

const names = (fields: readonly string[]) => (fields.length === 0 ? '—' : fields.map((f) => `\`${f}\``).join(', '));

/** One tool's row: what it is, its authority fields (every input field but its top-level content fields), its content fields. */
function row(tool: ToolDefinition): string {
  const { effect, egressFields, contentFields = [], launders } = tool.provenance;
  const kind = [effect && 'effect', (egressFields?.length ?? 0) > 0 && 'egress', launders && 'launders'].filter(Boolean).join(', ');
  const fields = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});
  return `| \`${tool.id}\` | ${kind} | ${names(fields.filter((f) => !contentFields.includes(f)))} | ${names(contentFields)} |`;
}

/** The table's rows as docs/SECURITY.md has them. */
function documented(): string[] {
  const lines = readFileSync(join(root, 'docs/SECURITY.md'), 'utf8').split('\n');
  const at = lines.indexOf(HEADER);
  expect(at, 'docs/SECURITY.md has the table of authority and content fields').toBeGreaterThan(0);
  const end = lines.findIndex((l, i) => i > at && !l.startsWith('|'));
  return lines.slice(at + 2, end);
}

describe('docs/SECURITY.md, "Authority and content fields, tool by tool"', () => {
  it('has one row per governed tool of the catalog, as its definition classifies its fields', () => {
    expect(documented()).toEqual(TOOL_CATALOG.filter(taintGoverns).map(row));
  });
});
