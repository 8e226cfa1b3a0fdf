/**
 * Published test vectors for every primitive sealed storage relies on, run against the exact
 * library entry points the code imports (@noble/hashes 2.x, @noble/ciphers 2.x).
 */
import { chacha20poly1305, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { argon2id } from '@noble/hashes/argon2.js';
import { extract, hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';

const h = hexToBytes;

describe('RFC 5869 HKDF-SHA256', () => {
  it('test case 1 (PRK and OKM)', () => {
    const ikm = h('0b'.repeat(22));
    const salt = h('000102030405060708090a0b0c');
    const info = h('f0f1f2f3f4f5f6f7f8f9');
    expect(bytesToHex(extract(sha256, ikm, salt))).toBe('077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5');
    expect(bytesToHex(hkdf(sha256, ikm, salt, info, 42))).toBe(
      '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
    );
  });

  it('test case 3 (zero-length salt and info)', () => {
    expect(bytesToHex(hkdf(sha256, h('0b'.repeat(22)), new Uint8Array(0), new Uint8Array(0), 42))).toBe(
      '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
    );
  });
});

describe('RFC 4231 HMAC-SHA256', () => {
  it('test case 1', () => {
    expect(bytesToHex(hmac(sha256, h('0b'.repeat(20)), utf8ToBytes('Hi There')))).toBe(
      'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    );
  });

  it('test case 2 (key shorter than the output)', () => {
    expect(bytesToHex(hmac(sha256, utf8ToBytes('Jefe'), utf8ToBytes('what do ya want for nothing?')))).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('test case 6 (key larger than the block size)', () => {
    expect(bytesToHex(hmac(sha256, h('aa'.repeat(131)), utf8ToBytes('Test Using Larger Than Block-Size Key - Hash Key First')))).toBe(
      '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    );
  });
});

describe('RFC 9106 §5.3 Argon2id', () => {
  // @noble/hashes argon2id supports both optional inputs: `key` is the RFC's secret K and
  // `personalization` its associated data X, so the full published vector applies.
  it('m = 32 KiB, t = 3, p = 4, with secret and associated data', () => {
    const tag = argon2id(new Uint8Array(32).fill(1), new Uint8Array(16).fill(2), {
      m: 32,
      t: 3,
      p: 4,
      dkLen: 32,
      key: new Uint8Array(8).fill(3),
      personalization: new Uint8Array(12).fill(4),
    });
    expect(bytesToHex(tag)).toBe('0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659');
  });
});

// The shared AEAD inputs of RFC 8439 §2.8.2 and draft-irtf-cfrg-xchacha §A.3.1.
const KEY = h('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
const AAD = h('50515253c0c1c2c3c4c5c6c7');
const SUNSCREEN = utf8ToBytes(
  "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
);

describe('RFC 8439 §2.8.2 ChaCha20-Poly1305 AEAD', () => {
  const nonce = h('070000004041424344454647');
  const ct =
    'd31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116';
  const tag = '1ae10b594f09e26a7e902ecbd0600691';

  it('encrypts to the published ciphertext and tag, and decrypts back', () => {
    expect(bytesToHex(chacha20poly1305(KEY, nonce, AAD).encrypt(SUNSCREEN))).toBe(ct + tag);
    expect(chacha20poly1305(KEY, nonce, AAD).decrypt(h(ct + tag))).toEqual(SUNSCREEN);
  });

  it('rejects a changed AAD', () => {
    expect(() => chacha20poly1305(KEY, nonce, h('50515253c0c1c2c3c4c5c6c8')).decrypt(h(ct + tag))).toThrow();
  });
});

describe('draft-irtf-cfrg-xchacha-03 §A.3.1 XChaCha20-Poly1305 AEAD', () => {
  const nonce = h('404142434445464748494a4b4c4d4e4f5051525354555657');
  const ct =
    'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e';
  const tag = 'c0875924c1c7987947deafd8780acf49';

  it('encrypts to the published ciphertext and tag, and decrypts back', () => {
    expect(bytesToHex(xchacha20poly1305(KEY, nonce, AAD).encrypt(SUNSCREEN))).toBe(ct + tag);
    expect(xchacha20poly1305(KEY, nonce, AAD).decrypt(h(ct + tag))).toEqual(SUNSCREEN);
  });

  it('rejects a flipped tag bit and a truncated ciphertext', () => {
    const bad = h(ct + tag);
    bad[bad.length - 1]! ^= 1;
    expect(() => xchacha20poly1305(KEY, nonce, AAD).decrypt(bad)).toThrow();
    expect(() => xchacha20poly1305(KEY, nonce, AAD).decrypt(h(ct + tag).subarray(0, -1))).toThrow();
  });
});
