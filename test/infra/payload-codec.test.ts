/** The payload codec on its own: no Temporal server needed (the codec server: codec-server.test.ts). */
import { randomBytes } from 'node:crypto';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  decodeOptionalFailureToOptionalError,
  encodeErrorToFailure,
  loadDataConverter,
} from '@temporalio/common/lib/internal-non-workflow/index.js';
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { aivyxDataConverter, BINDING_METADATA, createPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../infra/codec/index.js';
import { refusedPayloadReason } from '../../core/refused-payload.js';

const key = new Uint8Array(randomBytes(32));
const codec = createPayloadCodec(key);
const utf8 = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? new Uint8Array()).toString('utf8');
const SECRET = 'aivyx-secret-codec-unit';
const plain = (): Payload => defaultPayloadConverter.toPayload({ text: SECRET, n: 1 });

/** The rejection of `p`, asserted to be an AivyxError of kind Crypto. */
async function cryptoError(p: Promise<unknown>): Promise<AivyxError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AivyxError);
  expect((err as AivyxError).kind).toBe('Crypto');
  return err as AivyxError;
}

describe('payload codec', () => {
  it('round-trips a payload and leaves no plaintext (not even the encoding) on the wire', async () => {
    const original = plain();
    const [sealed] = await codec.encode([original]);
    expect(utf8(sealed!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(utf8(sealed!.metadata![KEY_ID_METADATA])).toBe('payload-v1');
    // The binding names the workflow (already in clear in any history); nothing else is readable.
    expect(Object.keys(sealed!.metadata!).sort()).toEqual(['encoding', KEY_ID_METADATA, BINDING_METADATA].sort());
    expect(utf8(sealed!.data)).not.toContain(SECRET);
    expect(utf8(sealed!.data)).not.toContain('json/plain');
    const [opened] = await codec.decode([sealed!]);
    expect(utf8(opened!.data)).toBe(utf8(original.data));
    expect(utf8(opened!.metadata!.encoding)).toBe('json/plain');
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual({ text: SECRET, n: 1 });
  });

  it('uses a fresh nonce per payload', async () => {
    const [a, b] = await codec.encode([plain(), plain()]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('refuses payloads it did not encrypt: clients throw Crypto, the worker hands on a refusal marker, the codec server displays them', async () => {
    const err = await cryptoError(codec.decode([plain()]));
    expect(err.message).toMatch(/not encrypted \(json\/plain\)/);
    const [marker] = await createPayloadCodec(key, { unencrypted: 'refuse' }).decode([plain()]);
    expect(refusedPayloadReason(defaultPayloadConverter.fromPayload(marker!))).toMatch(/not encrypted/);
    const p = plain();
    expect((await createPayloadCodec(key, { unencrypted: 'pass' }).decode([p]))[0]).toBe(p);
    // An absent value carries nothing to hide or forge.
    const none = defaultPayloadConverter.toPayload(undefined);
    expect((await codec.decode([none]))[0]).toBe(none);
  });

  it('binds a payload to its workflow: a copy sent to another workflow is refused, a scheduled run of the same id is not', async () => {
    const ctx = (workflowId: string) => ({ type: 'workflow' as const, namespace: 'default', workflowId });
    const [sealed] = await codec.encode([plain()], ctx('turn/cli/1'));
    expect(defaultPayloadConverter.fromPayload((await codec.decode([sealed!], ctx('turn/cli/1')))[0]!)).toEqual({ text: SECRET, n: 1 });
    const err = await cryptoError(codec.decode([sealed!], ctx('turn/cli/2')));
    expect(err.message).toMatch(/written for workflow "turn\/cli\/1", not "turn\/cli\/2" \(a copied payload\)/);
    const worker = createPayloadCodec(key, { unencrypted: 'refuse' });
    expect(refusedPayloadReason(defaultPayloadConverter.fromPayload((await worker.decode([sealed!], ctx('turn/cli/2')))[0]!))).toMatch(
      /a copied payload/,
    );
    // Relabelling the binding does not help: it is authenticated.
    sealed!.metadata![BINDING_METADATA] = new TextEncoder().encode('default\nturn/cli/2');
    expect((await cryptoError(codec.decode([sealed!], ctx('turn/cli/2')))).message).toMatch(/failed authentication/);
    const [scheduled] = await codec.encode([plain()], ctx('schedule-weekly'));
    expect(
      defaultPayloadConverter.fromPayload((await codec.decode([scheduled!], ctx('schedule-weekly-2026-12-07T08:00:00Z')))[0]!),
    ).toEqual({ text: SECRET, n: 1 });
    await cryptoError(codec.decode([scheduled!], ctx('schedule-weekly-evil')));
  });

  it('refuses tampered ciphertext with a Crypto error, leaving the input as it was', async () => {
    const [sealed] = await codec.encode([plain()]);
    sealed!.data![sealed!.data!.length - 1]! ^= 1;
    const before = Buffer.from(sealed!.data!);
    const err = await cryptoError(codec.decode([sealed!]));
    expect(err.message).toMatch(/failed authentication/);
    expect(Buffer.from(sealed!.data!).equals(before)).toBe(true);
  });

  it('refuses an encrypted payload without a key id', async () => {
    const [sealed] = await codec.encode([plain()]);
    delete sealed!.metadata![KEY_ID_METADATA];
    const err = await cryptoError(codec.decode([sealed!]));
    expect(err.message).toMatch(/no "encryption-key-id" metadata/);
  });

  it('refuses a payload sealed under another key id, naming both ids', async () => {
    const [sealed] = await codec.encode([plain()]);
    const err = await cryptoError(createPayloadCodec(key, 'payload-v2').decode([sealed!]));
    expect(err.message).toContain('"payload-v1"');
    expect(err.message).toContain('"payload-v2"');
  });

  it('binds the key id: relabelling a payload fails authentication even with the right key', async () => {
    const [sealed] = await codec.encode([plain()]);
    sealed!.metadata![KEY_ID_METADATA] = Buffer.from('payload-v2');
    const err = await cryptoError(createPayloadCodec(key, 'payload-v2').decode([sealed!]));
    expect(err.message).toMatch(/failed authentication/);
  });

  it('refuses a payload sealed under another key (wrong passphrase)', async () => {
    const [sealed] = await codec.encode([plain()]);
    await cryptoError(createPayloadCodec(new Uint8Array(randomBytes(32))).decode([sealed!]));
  });

  it('refuses a key of the wrong length', () => {
    expect(() => createPayloadCodec(new Uint8Array(16))).toThrow(/32 bytes/);
  });

  it('encrypts failure messages and stack traces (encodeCommonAttributes) and restores them on decode', async () => {
    const converter = loadDataConverter(aivyxDataConverter(codec));
    const failure = await encodeErrorToFailure(converter, ApplicationFailure.nonRetryable(`tool said ${SECRET}`, 'Tool'));
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(utf8(failure.encodedAttributes!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(utf8(failure.encodedAttributes!.data)).not.toContain(SECRET);
    const back = await decodeOptionalFailureToOptionalError(converter, failure);
    expect(back).toBeInstanceOf(ApplicationFailure);
    expect((back as ApplicationFailure).message).toBe(`tool said ${SECRET}`);
    expect((back as ApplicationFailure).type).toBe('Tool');
  });
});
