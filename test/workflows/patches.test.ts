/**
 * Every patch id lives in workflows/patches.ts: each `patched()` call names one of its constants, each
 * constant is used, and every patch a committed history recorded is still one of them (dropping a
 * constant while a history needs its branch is a retirement done too early).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as PATCHES from '../../workflows/patches.js';

const root = join(import.meta.dirname, '../..');
const ids = Object.values(PATCHES) as string[];
const names = Object.keys(PATCHES);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
const workflowFiles = sources(join(root, 'workflows')).map((f) => ({ file: relative(root, f), text: readFileSync(f, 'utf8') }));

/** The ids of the patch markers in a history (their payloads are plain JSON: `{ id, deprecated }`). */
function recordedPatches(history: string): string[] {
  const events = (JSON.parse(history) as { events: { markerRecordedEventAttributes?: MarkerAttributes }[] }).events;
  return events.flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    const data = m?.markerName === 'core_patch' ? m.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    return data ? [(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id] : [];
  });
}
interface MarkerAttributes {
  markerName?: string;
  details?: Record<string, { payloads?: { data?: string }[] }>;
}

describe('patch ids', () => {
  it('are distinct', () => {
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are never written inline: every patched() and deprecatePatch() call names a constant', () => {
    const inline = workflowFiles.flatMap(({ file, text }) =>
      [...text.matchAll(/\b(?:patched|deprecatePatch)\(\s*['"`]/g)].map((m) => `${file}: ${m[0]}`),
    );
    expect(inline).toEqual([]);
  });

  it('are each used by a workflow', () => {
    const unused = names.filter(
      (name) => !workflowFiles.some(({ file, text }) => file !== 'workflows/patches.ts' && new RegExp(`\\b${name}\\b`).test(text)),
    );
    expect(unused).toEqual([]);
  });

  it('cover every patch the committed histories recorded', () => {
    const dir = join(root, 'test/histories');
    const recorded = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => recordedPatches(readFileSync(join(dir, f), 'utf8')));
    expect(recorded.length).toBeGreaterThan(0);
    expect([...new Set(recorded)].filter((id) => !ids.includes(id))).toEqual([]);
  });
});
