/**
 * docs/CONFIG.md's configuration table is the table: generated from infra/config/env-table.ts by
 * `aivyx config --markdown`, so a variable added, renamed or reworded there shows up here until the
 * page is regenerated.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV_TABLE, envMarkdownTable } from '../../infra/config.js';

const page = fileURLToPath(new URL('../../docs/CONFIG.md', import.meta.url));

describe("docs/CONFIG.md's configuration table", () => {
  it('is exactly the table (regenerate it with `npm run aivyx -- config --markdown`)', () => {
    const doc = readFileSync(page, 'utf8');
    const section = /<!-- generated: aivyx config --markdown -->\n([\s\S]*?)\n<!-- end generated -->/.exec(doc)?.[1];
    expect(section, 'docs/CONFIG.md has no generated configuration table').toBeDefined();
    const names = (table: string) => [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    // The variables first (the clearer failure), then the whole text.
    expect(names(section!)).toEqual(Object.keys(ENV_TABLE));
    expect(section).toBe(envMarkdownTable());
  });
});
