import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { SignJWT, base64url, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  PREVIEW_TOKEN_TYPE,
  argumentsHash,
  hmacPreviewKey,
  issuePreviewToken,
  peekPreviewClaims,
  previewRefusalError,
  verifyPreviewToken,
  type ExpectedPreview,
  type PreviewBinding,
  type PreviewKey,
} from '../../../libs/patterns/preview/index.js';

const T0 = Date.parse('2026-11-30T09:00:00.000Z');
const hmac = (): PreviewKey => ({ alg: 'HS256', secret: randomBytes(32) });
const args = { sku: 'SKU-7', quantity: 30, supplier_id: 'SUP-1' };

const binding: PreviewBinding = {
  principalId: 'agent:purchasing',
  tenant: 't1',
  onBehalfOf: 'W-1',
  tool: 'create_purchase_order',
  argumentsHash: argumentsHash(args),
  resourceKey: 't1:inventory:SKU-7',
  resourceVersion: 'v-1',
  policyVersion: 'store-2026.11.1',
  previewHash: argumentsHash({ total_cents: 84_240 }),
  requiresApproval: false,
};

const expected: ExpectedPreview = {
  principalId: binding.principalId,
  tenant: binding.tenant,
  onBehalfOf: 'W-1',
  tool: binding.tool,
  argumentsHash: binding.argumentsHash,
  resourceKey: binding.resourceKey,
  policyVersion: binding.policyVersion,
};

const issue = (key: PreviewKey, b: PreviewBinding = binding) => issuePreviewToken(b, key, { nowMs: T0 });

/** The payload of a token, decoded without any check. */
const payloadOf = (token: string): JWTPayload =>
  JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[1]!))) as JWTPayload;

/** Replaces one character of the payload segment with another valid base64url character. */
function flipPayloadByte(token: string, at = 10): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const c = payload[at]!;
  const flipped = payload.slice(0, at) + (c === 'A' ? 'B' : 'A') + payload.slice(at + 1);
  return `${header}.${flipped}.${signature}`;
}

describe('preview tokens: issue and verify', () => {
  it('a token verifies against the same binding and key, with all claims intact (HS256)', async () => {
    const key = hmac();
    const { token, claims } = await issue(key);
    const got = await verifyPreviewToken(token, expected, key, T0 + 1_000);
    expect(got).toEqual({ ok: true, claims });
    expect(claims).toMatchObject({ ...binding, issuedAtMs: T0, expiresAtMs: T0 + 600_000 });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('EdDSA: signed with the private half, checked with the public half alone', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const { token } = await issue({ alg: 'EdDSA', privateKey, publicKey });
    const got = await verifyPreviewToken(token, expected, { alg: 'EdDSA', publicKey }, T0);
    expect(got.ok).toBe(true);
    await expect(issue({ alg: 'EdDSA', publicKey })).rejects.toThrow(TypeError);
  });

  it('two previews of the same thing get different token ids', async () => {
    const key = hmac();
    const [a, b] = await Promise.all([issue(key), issue(key)]);
    expect(a.claims.jti).not.toBe(b.claims.jti);
    expect(a.token).not.toBe(b.token);
  });

  it('refuses a short HMAC secret and a ttl under a second', async () => {
    await expect(issue({ alg: 'HS256', secret: randomBytes(16) })).rejects.toThrow(TypeError);
    await expect(issuePreviewToken(binding, hmac(), { nowMs: T0, ttlMs: 500 })).rejects.toThrow(RangeError);
  });
});

describe('preview tokens: tampering', () => {
  it('a flipped byte in the payload segment fails the signature check', async () => {
    const key = hmac();
    const { token } = await issue(key);
    for (const at of [0, 10, 40, 80]) {
      const got = await verifyPreviewToken(flipPayloadByte(token, at), expected, key, T0);
      expect(got).toEqual({ ok: false, refusal: { reason: 'bad-signature' } });
    }
  });

  it('a payload rewritten (other resource version) and re-signed with another key is refused', async () => {
    const key = hmac();
    const { token } = await issue(key);
    const payload = payloadOf(token);
    const forged = await new SignJWT({ ...payload, ver: 'v-2' })
      .setProtectedHeader({ alg: 'HS256', typ: PREVIEW_TOKEN_TYPE })
      .sign(randomBytes(32));
    const got = await verifyPreviewToken(forged, { ...expected, resourceVersion: 'v-2' }, key, T0);
    expect(got).toEqual({ ok: false, refusal: { reason: 'bad-signature' } });
  });

  it('the payload segment of a valid token spliced onto another token is refused', async () => {
    const key = hmac();
    const a = await issue(key);
    const b = await issue(key, { ...binding, resourceVersion: 'v-9' });
    const [h, , sig] = a.token.split('.');
    const spliced = `${h}.${b.token.split('.')[1]}.${sig}`;
    expect((await verifyPreviewToken(spliced, expected, key, T0)).ok).toBe(false);
  });

  it('an unsigned token (alg none) and one signed with another algorithm are refused', async () => {
    const key = hmac();
    const { token } = await issue(key);
    const [, payload] = token.split('.');
    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: PREVIEW_TOKEN_TYPE }))}.${payload}.`;
    expect((await verifyPreviewToken(none, expected, key, T0)).ok).toBe(false);
    const secret = (key as { secret: Uint8Array }).secret;
    const hs512 = await new SignJWT(payloadOf(token))
      .setProtectedHeader({ alg: 'HS512', typ: PREVIEW_TOKEN_TYPE })
      .sign(new Uint8Array([...secret, ...secret]));
    expect(await verifyPreviewToken(hs512, expected, key, T0)).toEqual({
      ok: false,
      refusal: { reason: 'bad-signature' },
    });
  });

  it('another JWT signed with the same key but of another type is refused as malformed', async () => {
    const key = hmac();
    const { token } = await issue(key);
    const payload = payloadOf(token);
    const other = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign((key as { secret: Uint8Array }).secret);
    expect(await verifyPreviewToken(other, expected, key, T0)).toEqual({
      ok: false,
      refusal: { reason: 'malformed' },
    });
  });

  it('garbage never throws: it is malformed', async () => {
    const key = hmac();
    for (const junk of ['', 'abc', 'a.b.c', 'x'.repeat(10_000), '..']) {
      const got = await verifyPreviewToken(junk, expected, key, T0);
      expect(got.ok).toBe(false);
    }
  });
});

describe('preview tokens: expiry and binding', () => {
  it('valid until 10 minutes after issue, then refused as expired with the instant it expired', async () => {
    const key = hmac();
    const { token } = await issue(key);
    expect((await verifyPreviewToken(token, expected, key, T0 + 599_999)).ok).toBe(true);
    const late = await verifyPreviewToken(token, expected, key, T0 + 600_000);
    expect(late).toEqual({ ok: false, refusal: { reason: 'expired', expiredAtMs: T0 + 600_000 } });
    if (late.ok) throw new Error('unreachable');
    expect(previewRefusalError(late.refusal, { previewTool: 'preview_purchase_order' }).message).toContain(
      '2026-11-30T09:10:00.000Z',
    );
  });

  const mismatches: [string, Partial<ExpectedPreview>, string][] = [
    ['another confirm tool', { tool: 'delete_everything' }, 'wrong-tool'],
    ['another principal', { principalId: 'agent:other' }, 'wrong-principal'],
    ['another tenant', { tenant: 't2' }, 'wrong-principal'],
    ['acting for another user', { onBehalfOf: 'W-2' }, 'wrong-principal'],
    ['other arguments', { argumentsHash: argumentsHash({ ...args, quantity: 31 }) }, 'arguments-changed'],
    ['another resource', { resourceKey: 't1:inventory:SKU-12' }, 'resource-mismatch'],
    ['a changed policy', { policyVersion: 'store-2026.12.1' }, 'policy-changed'],
    ['a changed resource version', { resourceVersion: 'v-2' }, 'resource-changed'],
    ['changed previewed amounts', { previewHash: argumentsHash({ total_cents: 1 }) }, 'preview-changed'],
  ];
  it.each(mismatches)('refuses %s', async (_what, change, reason) => {
    const key = hmac();
    const { token } = await issue(key);
    const got = await verifyPreviewToken(token, { ...expected, ...change }, key, T0);
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.refusal.reason).toBe(reason);
  });

  it('argumentsHash is canonical: key order does not matter, values do', () => {
    expect(argumentsHash({ a: 1, b: [1, 2] })).toBe(argumentsHash({ b: [1, 2], a: 1 }));
    expect(argumentsHash({ a: 1 })).not.toBe(argumentsHash({ a: 2 }));
  });

  it('peekPreviewClaims reads claims without checking (for ops screens), undefined for junk', async () => {
    const { token, claims } = await issue(hmac());
    expect(peekPreviewClaims(token)).toEqual(claims);
    expect(peekPreviewClaims('nope')).toBeUndefined();
  });
});

describe('hmacPreviewKey', () => {
  it('reads base64 and base64url secrets of 32+ bytes; two executors given one secret agree', async () => {
    const raw = randomBytes(32);
    const a = hmacPreviewKey(raw.toString('base64'));
    const b = hmacPreviewKey(raw.toString('base64url'));
    const { token } = await issue(a);
    expect((await verifyPreviewToken(token, expected, b, T0)).ok).toBe(true);
  });

  it('refuses short or non-base64 secrets without echoing them', () => {
    expect(() => hmacPreviewKey(randomBytes(16).toString('base64'))).toThrow(TypeError);
    expect(() => hmacPreviewKey('not base64 at all!')).toThrow('the preview secret is not base64 text');
  });
});
