/**
 * The folder order and the cycle rule are real: the repository's own lint configuration refuses an
 * upward import and an import cycle (fixtures in test/fixtures/lint, ignored by `npm run lint` itself).
 */
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

// The rules under test read imports only: the fixtures are linted without type information, so no
// TypeScript program of the whole repository is built (seconds on this machine).
const untyped = tseslint.configs.disableTypeChecked;
const eslint = new ESLint({ cwd: process.cwd(), ignore: false, overrideConfig: untyped });

/** The rules our config gives a file at `path` (what `npm run lint` applies there). */
async function rulesFor(path: string): Promise<Partial<Linter.RulesRecord>> {
  return ((await eslint.calculateConfigForFile(path)) as Linter.Config).rules ?? {};
}

async function messages(file: string, rules?: Partial<Linter.RulesRecord>): Promise<Linter.LintMessage[]> {
  const linter = rules
    ? new ESLint({ cwd: process.cwd(), ignore: false, overrideConfig: [untyped, { files: ['test/fixtures/lint/**'], rules }] })
    : eslint;
  const [result] = await linter.lintFiles([file]);
  return result?.messages ?? [];
}

describe('folder order', () => {
  it('a core/ file importing from app/ is refused with the folder order in the message', async () => {
    const rules = await rulesFor('core/errors.ts');
    const fence = rules['@typescript-eslint/no-restricted-imports'];
    expect(fence).toBeDefined();
    const found = await messages('test/fixtures/lint/layer-violation.ts', { '@typescript-eslint/no-restricted-imports': fence });
    const hit = found.find((m) => m.ruleId === '@typescript-eslint/no-restricted-imports');
    expect(hit?.message).toMatch(/core\/ sits below app\//);
  });

  it('the same import is allowed where the folder order permits it (app/ is the top)', async () => {
    const fence = (await rulesFor('app/stack.ts'))['@typescript-eslint/no-restricted-imports'];
    const found = await messages('test/fixtures/lint/layer-violation.ts', { '@typescript-eslint/no-restricted-imports': fence });
    expect(found.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')).toEqual([]);
  });

  it('every folder but app/ is fenced from the folders above it', async () => {
    for (const [layer, above] of [
      ['core', 'machines'],
      ['machines', 'workflows'],
      ['activities', 'infra'],
      ['infra', 'channels'],
      ['channels', 'app'],
    ] as const) {
      const fence = JSON.stringify((await rulesFor(`${layer}/x.ts`))['@typescript-eslint/no-restricted-imports']);
      expect(fence, layer).toContain(`**/${above}/**`);
    }
  });

  it('the workflow-safe zone refuses Node built-ins and I/O libraries, value and type imports alike', async () => {
    for (const file of ['core/x.ts', 'machines/x.ts', 'workflows/x.ts']) {
      const fence = (await rulesFor(file))['@typescript-eslint/no-restricted-imports'];
      const found = await messages('test/fixtures/lint/zone-io.ts', { '@typescript-eslint/no-restricted-imports': fence });
      expect(found.map((m) => m.message).join('\n'), file).toMatch(/imports no Node built-ins[\s\S]*No I\/O libraries/);
    }
  });

  it('an import cycle is refused', async () => {
    const found = await messages('test/fixtures/lint/cycle-a.ts');
    expect(found.map((m) => m.ruleId)).toContain('import-x/no-cycle');
  });
});
