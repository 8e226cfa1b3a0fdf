/**
 * One definition per tool: the model's schema, the parser, the scope and the workflow's sets all come
 * from the definition — and a bad input is refused in our words, naming the tool and the field.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_CONFIRM_FIRST, INTERRUPTIBLE_TOOLS, TOOL_CATALOG } from '../../core/tool-catalog.js';
import { defineTool } from '../../core/tools/define-tool.js';
import { AivyxError } from '../../core/errors.js';

/** A value of every JSON kind, and then some: each is wrong for most fields. */
const WRONG_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 60,
  '',
  ' ',
  'relative/path',
  '/',
  '/../..',
  '*',
  'a:b',
  'x'.repeat(20_000),
  '\u0000',
  [],
  [''],
  [1],
  ['a\u0000'],
  {},
  { a: 1 },
  Number.NaN,
];

function refusal(fn: () => unknown): AivyxError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AivyxError) return e;
    throw new Error(`not an AivyxError: ${String(e)}`);
  }
  throw new Error('no refusal');
}

describe('the JSON schema the model is shown', () => {
  for (const tool of TOOL_CATALOG) {
    it(`${tool.id}: an object schema with exactly the parser's fields, no $schema, no unknown fields allowed`, () => {
      const s = tool.inputSchema as {
        type: string;
        properties: Record<string, { description?: string }>;
        additionalProperties: unknown;
        $schema?: unknown;
        required?: string[];
      };
      expect(s.type).toBe('object');
      expect(s.additionalProperties).toBe(false);
      expect(s.$schema).toBeUndefined();
      // Every field the schema names is one the parser accepts, and the other way round.
      const unknown = refusal(() => tool.parse({ definitelyNotAField: 1 }));
      const allowed = /allowed fields: (.*)$/.exec(unknown.hint ?? '')?.[1]?.split(', ') ?? [];
      expect(Object.keys(s.properties).sort()).toEqual([...allowed].sort());
      for (const r of s.required ?? []) expect(Object.keys(s.properties)).toContain(r);
      // Providers (OpenAI, Anthropic) take plain JSON Schema: nothing here that JSON cannot carry.
      expect(() => JSON.parse(JSON.stringify(s))).not.toThrow();
      expect(JSON.stringify(s)).not.toMatch(/"\$ref"|"\$defs"/);
      for (const [name, prop] of Object.entries(s.properties))
        expect(
          prop.description ?? (prop as { enum?: unknown }).enum ?? (prop as { type?: unknown }).type,
          `${tool.id}.${name}`,
        ).toBeDefined();
    });
  }
});

describe('the parser refuses in our words', () => {
  it("every wrong value in every field is InvalidScope naming the tool, never zod's wording", () => {
    let refused = 0;
    for (const tool of TOOL_CATALOG) {
      const fields = Object.keys((tool.inputSchema as { properties: object }).properties);
      for (const field of fields) {
        for (const value of WRONG_VALUES) {
          let error: unknown;
          try {
            tool.parse({ [field]: value });
          } catch (e) {
            error = e;
          }
          if (error === undefined) continue; // some values are fine for some fields (and the rest missing is fine too)
          refused++;
          expect(error, `${tool.id}.${field}=${JSON.stringify(value)?.slice(0, 40)}`).toBeInstanceOf(AivyxError);
          const e = error as AivyxError;
          expect(e.kind).toBe('InvalidScope');
          expect(e.message.startsWith(`${tool.id}: `), e.message).toBe(true);
          expect(e.message, `${tool.id}.${field}`).not.toMatch(
            /Invalid input|expected (string|number|boolean|array|object)|Too (small|big)/,
          );
          // The hint separator of the field builders never leaks into a message.
          expect(e.message).not.toContain(String.fromCharCode(0x1f));
          expect(e.detail).toMatchObject({ tool: tool.id });
        }
      }
    }
    expect(refused).toBeGreaterThan(300);
  });

  it('a wrong field name is reported first, with the allowed fields as the hint', () => {
    const fsRead = TOOL_CATALOG.find((t) => t.id === 'fs.read')!;
    const e = refusal(() => fsRead.parse({ pth: '/etc/hosts', maxBytes: 'lots' }));
    expect(e.message).toBe('fs.read: unknown input field "pth"');
    expect(e.hint).toBe('allowed fields: path, maxBytes');
  });

  it('inputs that are not JSON objects are refused for every tool', () => {
    for (const tool of TOOL_CATALOG)
      for (const v of [null, [], 'x', 1]) expect(refusal(() => tool.parse(v)).message).toBe(`${tool.id}: input must be a JSON object`);
  });

  it('the canonical form is what the scope names (paths normalized, defaults filled)', () => {
    const fsDelete = TOOL_CATALOG.find((t) => t.id === 'fs.delete')!;
    expect(fsDelete.parse({ path: '/srv//a/./b/../c' })).toEqual({ path: '/srv/a/c', recursive: false });
    expect(fsDelete.requiredScope({ path: '/srv//a/./b/../c' })).toBe('fs.delete:/srv/a/c');
    // What an implementation re-derives from the parsed input (implementTool) is the same scope.
    expect(fsDelete.scopeOf(fsDelete.parse({ path: '/srv//a/./b/../c' }))).toBe('fs.delete:/srv/a/c');
  });
});

describe('a definition is checked when its module loads', () => {
  it('a non-strict input object is refused', () => {
    expect(() =>
      defineTool({
        id: 'x.loose',
        description: 'x',
        input: z.object({ a: z.string() }),
        scope: { base: 'fs.read' },
        idempotency: 'natural',
        provenance: { output: 'trusted', effect: false },
      }),
    ).toThrow(/must be a z.strictObject/);
  });

  it('an unknown scope base is refused', () => {
    expect(() =>
      defineTool({
        id: 'x.base',
        description: 'x',
        input: z.strictObject({}),
        scope: { base: 'fs.teleport' },
        idempotency: 'natural',
        provenance: { output: 'trusted', effect: false },
      }),
    ).toThrow(/unknown scope base "fs.teleport"/);
  });
});

describe('what derives from the definitions', () => {
  it('the interruptible and confirm-first sets', () => {
    expect([...INTERRUPTIBLE_TOOLS]).toEqual(['shell.spawn']);
    expect([...DEFAULT_CONFIRM_FIRST].sort()).toEqual([
      'channel.send',
      'fs.delete',
      'git.commit',
      'mission.cancel',
      'mission.create',
      'net.post',
      'shell.exec',
      'shell.spawn',
      'skills.propose',
    ]);
  });

  it('the retry story and provenance of each tool', () => {
    const table = Object.fromEntries(TOOL_CATALOG.map((t) => [t.id, [t.idempotency, t.provenance.output, t.provenance.effect]]));
    expect(table).toMatchObject({
      'fs.read': ['natural', 'depends', false],
      'shell.exec': ['at-most-once', 'untrusted', true],
      'net.fetch': ['natural', 'untrusted', false],
      'net.post': ['keyed', 'untrusted', true],
      'mcp.call': ['at-most-once', 'depends', true],
      'memory.write': ['keyed', 'trusted', true],
      'channel.send': ['keyed', 'trusted', true],
    });
    expect(TOOL_CATALOG.find((t) => t.id === 'net.fetch')!.provenance.egressFields).toEqual(['url']);
    // Every effect tool is either confirm-first or has a scope a tier ceiling bounds; reads have no effect.
    for (const t of TOOL_CATALOG)
      if (['fs.read', 'fs.metadata', 'memory.recall', 'git.status', 'git.diff', 'config.read', 'audit.read', 'net.fetch'].includes(t.id))
        expect(t.provenance.effect, t.id).toBe(false);
  });
});
