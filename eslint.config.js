// Lint: type-aware rules from typescript-eslint, the folder order (BRIEF §3: each folder imports only the
// folders below it), no import cycles, and the workflow-safe zone fence (no Node, no I/O in core/machines/workflows).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Bottom to top: a folder may import the folders before it, never the ones after it. */
export const LAYERS = ['core', 'machines', 'workflows', 'activities', 'infra', 'channels', 'app'];

const nodeAndIo = [
  {
    group: ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'crypto', 'net', 'http', 'https', 'worker_threads', 'stream'],
    message: 'The workflow-safe zone imports no Node built-ins.',
  },
  {
    group: ['pg', 'kysely', 'kysely-*', '@electric-sql/*', 'grammy', 'imapflow', 'nodemailer', 'hono', '@hono/*'],
    message: 'No I/O libraries in the workflow-safe zone.',
  },
  {
    group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'],
    message: 'Workflows may only use @temporalio/workflow and @temporalio/common.',
  },
];
const ZONE = new Set(['core', 'machines', 'workflows']);

/** The import patterns a file in `layer` may not use: every folder above it (and, in the zone, Node and I/O). */
function fence(layer) {
  const above = LAYERS.slice(LAYERS.indexOf(layer) + 1);
  const patterns = above.map((up) => ({
    group: [`**/${up}/**`, `../${up}/*`, `../../${up}/*`],
    message: `${layer}/ sits below ${up}/ (folder order ${LAYERS.join(' → ')}): move the shared piece down, or pass it in as a port.`,
  }));
  if (layer === 'workflows') {
    // Workflows see activities only as types (proxyActivities<typeof ...>): they are bundled without them.
    patterns.find((p) => p.group[0] === '**/activities/**').allowTypeImports = true;
  }
  return ZONE.has(layer) ? [...nodeAndIo, ...patterns] : patterns;
}

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.venv/**',
      '.venv-synapse/**',
      '.aivyx/**',
      'dist/**',
      'eslint.config.js',
      'app/bin.js',
      'app/build-state.js',
      'test/fixtures/lint/**',
      'test/fixtures/add-a-tool/**',
      'test/fixtures/add-a-channel/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.json` })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  ...LAYERS.map((layer) => ({
    files: [`${layer}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: fence(layer) }] },
  })),
);
