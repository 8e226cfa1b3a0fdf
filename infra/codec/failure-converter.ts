/**
 * The failure converter of every aivyx worker and client: error messages and stack traces travel in
 * an encoded payload (which the payload codec encrypts) instead of the failure's plaintext fields.
 * The SDK loads this file by path twice: `require()` in the worker and client (outside any TypeScript
 * loader under vitest, so the file must stay free of TypeScript-only syntax) and the workflow bundler,
 * which inlines it into the sandbox (so it imports nothing but @temporalio/common).
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** The failure converter the SDK looks up by name (`failureConverterPath`). */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
