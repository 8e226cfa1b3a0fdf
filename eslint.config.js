// Lint: type-aware rules from typescript-eslint, plus the workflow-safe zone fence (BRIEF §3).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const forbiddenInZone = [
  { group: ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'crypto', 'net', 'http', 'https', 'worker_threads', 'stream'], message: 'The workflow-safe zone imports no Node built-ins.' },
  { group: ['pg', 'kysely', 'kysely-*', '@electric-sql/*', 'grammy', 'imapflow', 'nodemailer', 'canonicalize'], message: 'No I/O libraries in the workflow-safe zone.' },
  { group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'], message: 'Workflows may only use @temporalio/workflow and @temporalio/common.' },
  { group: ['**/infra/**', '**/channels/**', '../infra/*', '../channels/*'], message: 'core/, machines/ and workflows/ never reach infra/ or channels/.' },
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.venv/**', '.aivyx/**', 'eslint.config.js', 'channels/cli/bin.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['core/**/*.ts', 'machines/**/*.ts', 'workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: forbiddenInZone.map((p) => ({ ...p, allowTypeImports: p.group.some((g) => g.includes('activities')) })) }],
    },
  },
  {
    // Workflows see activities only as types.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [...forbiddenInZone, { group: ['**/activities/**', '../activities/*'], message: 'Import activities as types only (proxyActivities<typeof ...>).', allowTypeImports: true }] }],
    },
  },
);
