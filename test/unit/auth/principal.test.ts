import { generateKeyPairSync } from 'node:crypto';
import { base64url, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { Principal } from '../../../libs/core/types.js';
import { createPrincipalVerifier, PRINCIPAL_TOKEN_TYPE, signPrincipal } from '../../../libs/auth/index.js';
import type { PrincipalVerifierOptions } from '../../../libs/auth/index.js';

const ISSUER = 'https://agents.example.test';
const AUDIENCE = 'toolgate-executor';
const NOW = Date.UTC(2030, 5, 1, 12, 0, 0);

const agent: Principal = {
  id: 'agent-support-7',
  tenant: 't1',
  kind: 'agent',
  scopes: ['orders:read', 'refunds:write'],
  roles: ['support'],
  onBehalfOf: 'user-42',
};

let ed: { privateKey: CryptoKey; publicKey: CryptoKey };
let ec: { privateKey: CryptoKey; publicKey: CryptoKey };
let other: { privateKey: CryptoKey; publicKey: CryptoKey };

beforeAll(async () => {
  ed = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  ec = await generateKeyPair('ES256');
  other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
});

function verifier(
  overrides: Partial<PrincipalVerifierOptions> = {},
): ReturnType<typeof createPrincipalVerifier> {
  return createPrincipalVerifier({
    keys: { 'k-2030-06': ed.publicKey, 'k-ec': ec.publicKey },
    issuer: ISSUER,
    audience: AUDIENCE,
    clockToleranceSec: 5,
    now: () => NOW,
    ...overrides,
  });
}

function sign(
  principal: Principal = agent,
  extra: { kid?: string; ttlSeconds?: number; at?: number } = {},
): Promise<string> {
  return signPrincipal(principal, ed.privateKey, {
    issuer: ISSUER,
    audience: AUDIENCE,
    ttlSeconds: extra.ttlSeconds ?? 300,
    kid: extra.kid ?? 'k-2030-06',
    now: () => extra.at ?? NOW,
  });
}

/**
 * A token with the accepted kid, issuer, audience and a valid lifetime, but claims, header and key as
 * given (`made`): what signPrincipal would never produce. Without `subject` it has no `sub` claim.
 */
function handMadeToken(
  claims: Record<string, unknown>,
  key: CryptoKey | Uint8Array,
  made: { alg: string; typ: string; subject?: string },
): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: made.alg, typ: made.typ, kid: 'k-2030-06' });
  if (made.subject !== undefined) jwt.setSubject(made.subject);
  return jwt
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(NOW / 1000)
    .setExpirationTime(NOW / 1000 + 60)
    .sign(key);
}

async function refusal(promise: Promise<unknown>): Promise<ToolgateError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolgateError);
    const e = err as ToolgateError;
    expect(e.code).toBe('INVALID_PRINCIPAL');
    expect(e.outcome).toBe('UNAUTHORIZED');
    expect(e.retryable).toBe(false);
    return e;
  }
  throw new Error('expected the token to be refused');
}

/** Re-encodes one part of a compact JWS without re-signing it. */
function rewrite(token: string, part: 0 | 1, edit: (json: Record<string, unknown>) => void): string {
  const parts = token.split('.');
  const json = JSON.parse(new TextDecoder().decode(base64url.decode(parts[part]!))) as Record<
    string,
    unknown
  >;
  edit(json);
  parts[part] = base64url.encode(JSON.stringify(json));
  return parts.join('.');
}

describe('signPrincipal + createPrincipalVerifier', () => {
  it('round-trips the principal (EdDSA) and returns it frozen', async () => {
    const token = await sign();
    expect(token.split('.')).toHaveLength(3);
    const principal = await verifier().verify(token);
    expect(principal).toEqual(agent);
    expect(Object.isFrozen(principal)).toBe(true);
    expect(Object.isFrozen(principal.scopes)).toBe(true);
  });

  it('round-trips with ES256 and with a JWKS', async () => {
    const token = await signPrincipal(agent, ec.privateKey, {
      issuer: ISSUER,
      audience: AUDIENCE,
      ttlSeconds: 60,
      kid: 'k-ec',
      now: () => NOW,
    });
    expect(JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[0]!)))).toMatchObject({
      alg: 'ES256',
      typ: PRINCIPAL_TOKEN_TYPE,
      kid: 'k-ec',
    });
    expect(await verifier().verify(token)).toEqual(agent);
    const jwks = { keys: [{ ...(await exportJWK(ec.publicKey)), kid: 'k-ec', alg: 'ES256' }] };
    expect(await verifier({ keys: jwks }).verify(token)).toEqual(agent);
  });

  it('signs with node KeyObjects and JWKs too, and omits obo when absent', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const service: Principal = { id: 'svc-billing', tenant: 't2', kind: 'service', scopes: [], roles: [] };
    const token = await signPrincipal(service, privateKey, {
      issuer: ISSUER,
      audience: AUDIENCE,
      ttlSeconds: 60,
      now: () => NOW,
    });
    const v = verifier({ keys: { only: publicKey } });
    const verified = await v.verify(token);
    expect(verified).toEqual(service);
    expect(verified).not.toHaveProperty('onBehalfOf');
    const jwk: JWK = await exportJWK(ed.privateKey);
    const fromJwk = await signPrincipal(agent, jwk, {
      issuer: ISSUER,
      audience: AUDIENCE,
      ttlSeconds: 60,
      kid: 'k-2030-06',
      now: () => NOW,
    });
    expect(await verifier().verify(fromJwk)).toEqual(agent);
  });

  it('accepts a token within the clock tolerance', async () => {
    const token = await sign(agent, { ttlSeconds: 60, at: NOW - 63_000 });
    expect(await verifier().verify(token)).toEqual(agent);
  });
});

describe('refusals (INVALID_PRINCIPAL)', () => {
  it('refuses an unsigned token (alg none)', async () => {
    const claims = {
      sub: agent.id,
      tenant: 't1',
      kind: 'agent',
      scopes: ['*'],
      roles: ['admin'],
      iss: ISSUER,
      aud: AUDIENCE,
      iat: NOW / 1000,
      exp: NOW / 1000 + 60,
    };
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: PRINCIPAL_TOKEN_TYPE }));
    const unsigned = `${header}.${base64url.encode(JSON.stringify(claims))}.`;
    const e = await refusal(verifier().verify(unsigned));
    expect(e.message).toBe('The principal assertion is not signed with an accepted algorithm.');
  });

  it('refuses an HMAC token made with the public key as secret (algorithm confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(await exportJWK(ed.publicKey)));
    const forged = await handMadeToken({ tenant: 't1', kind: 'agent', scopes: ['*'], roles: [] }, secret, {
      alg: 'HS256',
      typ: PRINCIPAL_TOKEN_TYPE,
      subject: 'attacker',
    });
    const e = await refusal(verifier().verify(forged));
    expect(e.message).toBe('The principal assertion is not signed with an accepted algorithm.');
  });

  it('refuses a tampered payload (scopes widened after signing)', async () => {
    const token = await sign();
    const tampered = rewrite(token, 1, (claims) => {
      claims.scopes = ['orders:read', 'refunds:write', 'admin:*'];
    });
    const e = await refusal(verifier().verify(tampered));
    expect(e.message).toBe('The principal assertion has an invalid signature.');
  });

  it('refuses a token signed by an untrusted key that reuses a trusted kid', async () => {
    const token = await signPrincipal(agent, other.privateKey, {
      issuer: ISSUER,
      audience: AUDIENCE,
      ttlSeconds: 60,
      kid: 'k-2030-06',
      now: () => NOW,
    });
    const e = await refusal(verifier().verify(token));
    expect(e.message).toBe('The principal assertion has an invalid signature.');
  });

  it('refuses an unknown kid, and a missing kid when several keys are trusted', async () => {
    const unknown = await sign(agent, { kid: 'k-retired' });
    expect((await refusal(verifier().verify(unknown))).message).toBe(
      'The principal assertion is signed with an unknown key.',
    );
    // "toString" must not resolve to a prototype member.
    const proto = await sign(agent, { kid: 'toString' });
    expect((await refusal(verifier().verify(proto))).message).toBe(
      'The principal assertion is signed with an unknown key.',
    );
    const noKid = await signPrincipal(agent, ed.privateKey, {
      issuer: ISSUER,
      audience: AUDIENCE,
      ttlSeconds: 60,
      now: () => NOW,
    });
    expect((await refusal(verifier().verify(noKid))).message).toBe(
      'The principal assertion is signed with an unknown key.',
    );
    const jwks = { keys: [{ ...(await exportJWK(ec.publicKey)), kid: 'k-ec', alg: 'ES256' }] };
    expect((await refusal(verifier({ keys: jwks }).verify(unknown))).message).toBe(
      'The principal assertion is signed with an unknown key.',
    );
  });

  it('refuses the wrong issuer and the wrong audience', async () => {
    const wrongIss = await signPrincipal(agent, ed.privateKey, {
      issuer: 'https://evil.test',
      audience: AUDIENCE,
      ttlSeconds: 60,
      kid: 'k-2030-06',
      now: () => NOW,
    });
    expect((await refusal(verifier().verify(wrongIss))).message).toBe(
      'The principal assertion comes from an untrusted issuer.',
    );
    const wrongAud = await signPrincipal(agent, ed.privateKey, {
      issuer: ISSUER,
      audience: 'billing-api',
      ttlSeconds: 60,
      kid: 'k-2030-06',
      now: () => NOW,
    });
    expect((await refusal(verifier().verify(wrongAud))).message).toBe(
      'The principal assertion is meant for another audience.',
    );
  });

  it('refuses an expired token beyond the tolerance, and one older than maxTokenAgeSec', async () => {
    const expired = await sign(agent, { ttlSeconds: 60, at: NOW - 70_000 });
    expect((await refusal(verifier().verify(expired))).message).toBe('The principal assertion has expired.');
    const old = await sign(agent, { ttlSeconds: 3600, at: NOW - 600_000 });
    expect(await verifier().verify(old)).toEqual(agent);
    expect((await refusal(verifier({ maxTokenAgeSec: 300 }).verify(old))).message).toBe(
      'The principal assertion is too old.',
    );
  });

  it('judges the token as of atMs: valid then, whatever the verifier clock says now', async () => {
    // Accepted by the broker at NOW - 100 s, within its 60 s lifetime; redelivered at NOW.
    const acceptedAt = NOW - 100_000;
    const token = await sign(agent, { ttlSeconds: 60, at: acceptedAt - 1_000 });
    expect((await refusal(verifier().verify(token))).message).toBe('The principal assertion has expired.');
    expect(await verifier().verify(token, { atMs: acceptedAt })).toEqual(agent);
    // maxTokenAgeSec and the issue time are judged at the same instant.
    expect(await verifier({ maxTokenAgeSec: 30 }).verify(token, { atMs: acceptedAt })).toEqual(agent);
    expect((await refusal(verifier().verify(token, { atMs: acceptedAt - 60_000 }))).message).toBe(
      'The principal assertion has an invalid issue time.',
    );
    // A replay accepted after the lifetime is refused, however recently it was signed.
    expect((await refusal(verifier().verify(token, { atMs: acceptedAt + 70_000 }))).message).toBe(
      'The principal assertion has expired.',
    );
    expect((await refusal(verifier().verify(token, { atMs: Number.NaN }))).code).toBe('INVALID_PRINCIPAL');
  });

  it('refuses a token issued in the future', async () => {
    const future = await sign(agent, { at: NOW + 120_000 });
    expect((await refusal(verifier().verify(future))).message).toBe(
      'The principal assertion has an invalid issue time.',
    );
  });

  it('refuses another JWT type signed by the same key (an id token is not a principal)', async () => {
    const idToken = await handMadeToken(
      { tenant: 't1', kind: 'agent', scopes: [], roles: [] },
      ed.privateKey,
      { alg: 'EdDSA', typ: 'JWT', subject: agent.id },
    );
    expect((await refusal(verifier().verify(idToken))).message).toBe(
      'The principal assertion is not a principal assertion.',
    );
  });

  it('refuses validly signed tokens whose principal claims are malformed', async () => {
    const base = { tenant: 't1', kind: 'agent', scopes: ['a'], roles: [] } as Record<string, unknown>;
    const variants: Record<string, unknown>[] = [
      { ...base, kind: 'admin' },
      { ...base, scopes: 'refunds:write' },
      { ...base, roles: [1] },
      { ...base, tenant: '' },
      { kind: 'agent', scopes: [], roles: [] },
      { ...base, obo: 42 },
    ];
    for (const claims of variants) {
      const token = await handMadeToken(claims, ed.privateKey, {
        alg: 'EdDSA',
        typ: PRINCIPAL_TOKEN_TYPE,
        subject: agent.id,
      });
      const e = await refusal(verifier().verify(token));
      expect(e.message).toBe('The principal assertion carries malformed principal claims.');
    }
    // No subject at all is caught by the registered-claim check.
    const noSub = await handMadeToken(base, ed.privateKey, { alg: 'EdDSA', typ: PRINCIPAL_TOKEN_TYPE });
    expect((await refusal(verifier().verify(noSub))).message).toBe(
      'The principal assertion has an invalid "sub" claim.',
    );
  });

  it('refuses garbage without echoing it', async () => {
    for (const garbage of ['', 'not-a-jwt', 'a.b.c', 'x'.repeat(20_000), 'eyJhbGciOiJFZERTQSJ9.e30']) {
      const e = await refusal(verifier().verify(garbage));
      expect(e.message).toBe('The principal assertion is missing or malformed.');
    }
  });
});

describe('remembered tokens', () => {
  /** What a verification came to: the principal's id, or the refusal's reason. */
  async function verdict(
    v: ReturnType<typeof createPrincipalVerifier>,
    token: string,
    atMs: number,
  ): Promise<string> {
    try {
      return `ok:${(await v.verify(token, { atMs })).id}`;
    } catch (err) {
      return `refused:${(err as { reason?: string }).reason ?? String(err)}`;
    }
  }

  /** A principal token with the time claims given, in epoch seconds. */
  function timed(times: { iat: number; exp: number; nbf?: number }): Promise<string> {
    const jwt = new SignJWT({
      tenant: agent.tenant,
      kind: agent.kind,
      scopes: [...agent.scopes],
      roles: [...agent.roles],
    })
      .setProtectedHeader({ alg: 'EdDSA', typ: PRINCIPAL_TOKEN_TYPE, kid: 'k-2030-06' })
      .setSubject(agent.id)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(times.iat)
      .setExpirationTime(times.exp);
    if (times.nbf !== undefined) jwt.setNotBefore(times.nbf);
    return jwt.sign(ed.privateKey);
  }

  it('never changes a verdict: judged at every instant around each time limit, as a verifier without memory judges', async () => {
    const base = Math.floor(NOW / 1000);
    const tokens = [
      { iat: base, exp: base + 60 },
      { iat: base - 10, exp: base + 5, nbf: base + 3 },
      { iat: base + 2, exp: base + 30 },
    ];
    let compared = 0;
    for (const maxTokenAgeSec of [undefined, 20]) {
      const options = maxTokenAgeSec === undefined ? {} : { maxTokenAgeSec };
      for (const times of tokens) {
        const token = await timed(times);
        const edges = [times.iat, times.exp, times.nbf ?? times.iat, times.iat + (maxTokenAgeSec ?? 0)];
        // Edges that coincide (no nbf, no age limit) give each instant once.
        const instants = [
          ...new Set(
            edges.flatMap((edge) =>
              [-7, -6, -5, -4, -1, 0, 1, 4, 5, 6, 7].flatMap((d) => [
                (edge + d) * 1000,
                (edge + d) * 1000 + 999,
              ]),
            ),
          ),
        ];
        // One verifier remembers (warmed at every instant, in shuffled order); the other forgets, so
        // its verdict at an instant is asked once.
        const remembering = verifier({ ...options, rememberedTokens: 100 });
        const forgetting = verifier({ ...options, rememberedTokens: 0 });
        const expected = new Map<number, string>();
        for (const atMs of instants) expected.set(atMs, await verdict(forgetting, token, atMs));
        const order = [...instants, ...instants].sort(
          (a, b) => ((a * 7919) % 13) - ((b * 7919) % 13) || a - b,
        );
        for (const atMs of order) {
          expect(await verdict(remembering, token, atMs), `${JSON.stringify(times)} at ${atMs}`).toBe(
            expected.get(atMs),
          );
          compared += 1;
        }
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  it('remembers a token, not a principal: another token is checked in full, a tampered one refused', async () => {
    const v = verifier();
    const token = await sign();
    expect(await v.verify(token)).toEqual(agent);
    const widened = rewrite(token, 1, (claims) => {
      claims.scopes = ['*'];
    });
    expect((await refusal(v.verify(widened))).message).toBe(
      'The principal assertion has an invalid signature.',
    );
    expect(await v.verify(token)).toEqual(agent);
  });
});

describe('configuration', () => {
  it('refuses private or secret keys in a verifier, and an empty key set', async () => {
    expect(() =>
      createPrincipalVerifier({ keys: { k: ed.privateKey }, issuer: ISSUER, audience: AUDIENCE }),
    ).toThrow(/not a public key/);
    const privateJwk = { ...(await exportJWK(ed.privateKey)), kid: 'k' };
    expect(() =>
      createPrincipalVerifier({ keys: { keys: [privateJwk] }, issuer: ISSUER, audience: AUDIENCE }),
    ).toThrow(/not a public key/);
    expect(() => createPrincipalVerifier({ keys: {}, issuer: ISSUER, audience: AUDIENCE })).toThrow(
      /at least one key/,
    );
  });

  it('refuses to sign a malformed principal, a non-positive ttl, or with an unsupported key', async () => {
    const bad = { ...agent, tenant: '' };
    await expect(sign(bad)).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(sign(agent, { ttlSeconds: 0 })).rejects.toMatchObject({ code: 'INTERNAL' });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await expect(
      signPrincipal(agent, rsa.privateKey, { issuer: ISSUER, audience: AUDIENCE, ttlSeconds: 60 }),
    ).rejects.toThrow('A principal signing key must be Ed25519 or P-256.');
  });
});
