import { readdirSync, readFileSync } from 'node:fs';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import * as toolgate from '../../../libs/index.js';
import {
  createPrincipalVerifier,
  DEFAULT_PRINCIPAL_AUDIENCE,
  DEFAULT_PRINCIPAL_ISSUER,
  PRINCIPAL_REFUSAL_REASONS,
  PRINCIPAL_TOKEN_TYPE,
  PrincipalRefusedError,
  principalRefusalReason,
  publicJwkOf,
  refusalReasonOf,
  signPrincipal,
  type PrincipalRefusalReason,
} from '../../../libs/auth/index.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import type { Principal } from '../../../libs/core/types.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { resolveClientOptions } from '../../../services/sdk/client-options.js';

const root = new URL('../../../', import.meta.url);
const NOW = Date.UTC(2030, 0, 1);
const agent: Principal = { id: 'agent-1', tenant: 't1', kind: 'agent', scopes: ['a:b'], roles: [] };

/**
 * Every issuer / audience value a file names: `PRINCIPAL_ISSUER: x`, `PRINCIPAL_ISSUER=x`,
 * `issuer: 'x'` (and the same for the audience), as a deployment or a snippet spells them.
 */
function identityValues(text: string): { issuers: string[]; audiences: string[] } {
  const grab = (env: string, key: string): string[] => [
    ...[...text.matchAll(new RegExp(`${env}\\s*[:=]\\s*['"]?([^'"\\s,}\\\\\`]+)`, 'g'))].map((m) => m[1]!),
    ...[...text.matchAll(new RegExp(`\\b${key}:\\s*['"]([^'"]*)['"]`, 'g'))].map((m) => m[1]!),
  ];
  return { issuers: grab('PRINCIPAL_ISSUER', 'issuer'), audiences: grab('PRINCIPAL_AUDIENCE', 'audience') };
}

function filesToCheck(): string[] {
  const inDir = (dir: string, ext: string): string[] =>
    readdirSync(new URL(dir, root))
      .filter((f) => f.endsWith(ext))
      .map((f) => `${dir}${f}`);
  return [
    'README.md',
    'services/executor/README.md',
    'docker-compose.yml',
    ...inDir('deploy/k8s/', '.yaml'),
    ...inDir('services/demo/', '.ts'),
    'services/embedded/topology.ts',
  ];
}

describe('one issuer / audience pair everywhere', () => {
  it('is exported once, from libs/auth and the package root', () => {
    expect(DEFAULT_PRINCIPAL_ISSUER).toBe('toolgate-agent-backend');
    expect(DEFAULT_PRINCIPAL_AUDIENCE).toBe('toolgate-executor');
    expect(toolgate.DEFAULT_PRINCIPAL_ISSUER).toBe(DEFAULT_PRINCIPAL_ISSUER);
    expect(toolgate.DEFAULT_PRINCIPAL_AUDIENCE).toBe(DEFAULT_PRINCIPAL_AUDIENCE);
  });

  it('the value finder sees every spelling (so the check below can fail)', () => {
    const sample = [
      'PRINCIPAL_ISSUER: agent-backend',
      'PRINCIPAL_AUDIENCE=toolgate \\',
      'signing: { key, issuer: \'x-iss\', audience: "x-aud" },',
      "PRINCIPAL_ISSUER: 'quoted-iss'",
    ].join('\n');
    expect(identityValues(sample)).toEqual({
      issuers: ['agent-backend', 'quoted-iss', 'x-iss'],
      audiences: ['toolgate', 'x-aud'],
    });
  });

  it('READMEs, compose, k8s, the demo and the embedded topology name no other pair', () => {
    const found: Array<{ file: string; issuers: string[]; audiences: string[] }> = [];
    for (const file of filesToCheck()) {
      found.push({ file, ...identityValues(readFileSync(new URL(file, root), 'utf8')) });
    }
    const wrong = found.flatMap(({ file, issuers, audiences }) => [
      ...issuers.filter((v) => v !== DEFAULT_PRINCIPAL_ISSUER).map((v) => `${file}: issuer ${v}`),
      ...audiences.filter((v) => v !== DEFAULT_PRINCIPAL_AUDIENCE).map((v) => `${file}: audience ${v}`),
    ]);
    expect(wrong).toEqual([]);
    // The places a user copies from do name the pair (the check is not vacuous).
    const named = (file: string): { issuers: string[]; audiences: string[] } =>
      found.find((f) => f.file === file)!;
    for (const file of ['README.md', 'docker-compose.yml', 'deploy/k8s/config.yaml']) {
      expect(named(file).issuers.length, file).toBeGreaterThan(0);
      expect(named(file).audiences.length, file).toBeGreaterThan(0);
    }
  });

  it('the committed compose pair is a real pair: its private key signs what its JWKS verifies', async () => {
    const dir = new URL('deploy/docker/dev-keys/', root);
    const key = createPrivateKey(readFileSync(new URL('principal-signing-key.pem', dir)));
    const jwks = JSON.parse(readFileSync(new URL('principal-jwks.json', dir), 'utf8')) as {
      keys: Array<{ kid: string }>;
    };
    const mounted = /\.\/(deploy\/docker\/dev-keys\/principal-jwks\.json):\/etc\/toolgate\/jwks\.json/.exec(
      readFileSync(new URL('docker-compose.yml', root), 'utf8'),
    );
    expect(mounted?.[1]).toBe('deploy/docker/dev-keys/principal-jwks.json');
    expect(jwks.keys.map((k) => k.kid)).toEqual(['dev-only-do-not-deploy']);
    const token = await signPrincipal(agent, key, { kid: 'dev-only-do-not-deploy', ttlSeconds: 60 });
    const verifier = createPrincipalVerifier({
      keys: jwks,
      issuer: DEFAULT_PRINCIPAL_ISSUER,
      audience: DEFAULT_PRINCIPAL_AUDIENCE,
    });
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: 'agent-1' });
  });

  it('is what the SDK signs with and the executor expects when neither is configured', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const options = resolveClientOptions({
      publisher: { publish: () => Promise.resolve() },
      subscriber: { subscribe: () => Promise.reject(new Error('unused')) },
      codec: {
        encode: () => Promise.reject(new Error('unused')),
        decode: () => Promise.reject(new Error('unused')),
      },
      topics: { calls: 'c', results: 'r' },
      instanceId: 'a1',
      replySlot: 0,
      signing: { key: privateKey, kid: 'k1' },
    });
    expect(options.signing).toMatchObject({
      issuer: DEFAULT_PRINCIPAL_ISSUER,
      audience: DEFAULT_PRINCIPAL_AUDIENCE,
      kid: 'k1',
    });
    const config = loadExecutorConfig({
      KAFKA_BROKERS: 'k:9092',
      SCHEMA_REGISTRY_URL: 'http://r:8081',
      REDIS_URL: 'redis://r:6379',
      DATABASE_URL: 'postgres://p@db:5432/x',
      PRINCIPAL_JWKS: JSON.stringify({ keys: [publicJwkOf(publicKey, 'k1')] }),
    });
    expect(config.principal).toMatchObject({
      issuer: DEFAULT_PRINCIPAL_ISSUER,
      audience: DEFAULT_PRINCIPAL_AUDIENCE,
    });
    const token = await signPrincipal(agent, options.signing.key, {
      issuer: options.signing.issuer,
      audience: options.signing.audience,
      kid: 'k1',
      ttlSeconds: 60,
    });
    const verifier = createPrincipalVerifier({ keys: config.principal.jwks, ...config.principal });
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: 'agent-1', tenant: 't1' });
    // signPrincipal alone defaults the same way.
    const bare = await signPrincipal(agent, privateKey, { kid: 'k1', ttlSeconds: 60 });
    await expect(verifier.verify(bare)).resolves.toMatchObject({ id: 'agent-1' });
  });
});

describe('principal refusal reasons', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const stranger = generateKeyPairSync('ed25519').privateKey;
  const verifier = createPrincipalVerifier({
    keys: { k1: publicKey },
    issuer: DEFAULT_PRINCIPAL_ISSUER,
    audience: DEFAULT_PRINCIPAL_AUDIENCE,
    maxTokenAgeSec: 600,
    now: () => NOW,
  });
  const sign = (
    overrides: {
      issuer?: string;
      audience?: string;
      at?: number;
      kid?: string;
      key?: typeof privateKey;
    } = {},
  ) =>
    signPrincipal(agent, overrides.key ?? privateKey, {
      ...(overrides.issuer === undefined ? {} : { issuer: overrides.issuer }),
      ...(overrides.audience === undefined ? {} : { audience: overrides.audience }),
      kid: overrides.kid ?? 'k1',
      ttlSeconds: 300,
      now: () => overrides.at ?? NOW,
    });
  const claims = { sub: 'a', tenant: 't1', kind: 'agent', scopes: [], roles: [] };
  const raw = (
    opts: { claims?: Record<string, unknown>; header?: Record<string, unknown>; iatSec?: number } = {},
  ): Promise<string> =>
    new SignJWT(opts.claims ?? claims)
      .setProtectedHeader({ alg: 'EdDSA', typ: PRINCIPAL_TOKEN_TYPE, kid: 'k1', ...opts.header })
      .setIssuer(DEFAULT_PRINCIPAL_ISSUER)
      .setAudience(DEFAULT_PRINCIPAL_AUDIENCE)
      .setIssuedAt(opts.iatSec ?? Math.floor(NOW / 1000))
      .setExpirationTime(Math.floor(NOW / 1000) + 300)
      .sign(privateKey);

  async function reasonOf(token: string | Promise<string>): Promise<PrincipalRefusalReason> {
    try {
      await verifier.verify(await token);
    } catch (err) {
      expect(err).toBeInstanceOf(PrincipalRefusedError);
      expect(err).toBeInstanceOf(ToolgateError);
      expect((err as ToolgateError).code).toBe('INVALID_PRINCIPAL');
      return refusalReasonOf(err);
    }
    throw new Error('the token was accepted');
  }

  it('names each kind of bad assertion', async () => {
    const good = await sign();
    const [h, p, s] = good.split('.') as [string, string, string];
    const cases: Array<[PrincipalRefusalReason, string | Promise<string>]> = [
      ['missing', ''],
      ['malformed', 'not-a-jws'],
      ['malformed', 'x'.repeat(20_000)],
      ['algorithm', `${Buffer.from('{"alg":"none","typ":"tg-principal+jwt"}').toString('base64url')}.${p}.`],
      ['signature', `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`],
      ['signature', sign({ key: stranger })],
      ['unknown_key', sign({ kid: 'k9' })],
      ['type', raw({ header: { typ: 'JWT' } })],
      ['issuer', sign({ issuer: 'agent-backend' })],
      ['audience', sign({ audience: 'toolgate' })],
      ['expired', sign({ at: NOW - 400_000 })],
      ['too_old', raw({ iatSec: Math.floor(NOW / 1000) - 900 })],
      ['issued_in_future', sign({ at: NOW + 600_000 })],
      ['claims', raw({ claims: { ...claims, kind: 'robot' } })],
    ];
    const got: Array<[PrincipalRefusalReason, PrincipalRefusalReason]> = [];
    for (const [expected, token] of cases) got.push([expected, await reasonOf(token)]);
    expect(got.map(([, actual]) => actual)).toEqual(cases.map(([expected]) => expected));
    // The message stays the one model-safe sentence per kind; it never carries the token.
    await expect(verifier.verify(await sign({ audience: 'toolgate' }))).rejects.toThrow(
      'The principal assertion is meant for another audience.',
    );
  });

  it('is always one of the closed list, whatever the input', () => {
    const closed = new Set<string>(PRINCIPAL_REFUSAL_REASONS);
    expect(closed.has('other')).toBe(true);
    let seed = 7;
    const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    const alphabet = 'abcdefghijklmnopqrstuvwxyz_ ';
    const inputs: unknown[] = [undefined, null, 0, {}, [], 'EXPIRED', 'expired ', '__proto__', 'toString'];
    for (let i = 0; i < 500; i++) {
      const len = next() % 14;
      inputs.push(Array.from({ length: len }, () => alphabet[next() % alphabet.length]).join(''));
    }
    for (const r of PRINCIPAL_REFUSAL_REASONS) inputs.push(r);
    for (const input of inputs) {
      const reason = principalRefusalReason(input);
      expect(closed.has(reason), String(input)).toBe(true);
      if (!PRINCIPAL_REFUSAL_REASONS.includes(input as PrincipalRefusalReason)) expect(reason).toBe('other');
      expect(closed.has(refusalReasonOf(Object.assign(new Error('x'), { reason: input })))).toBe(true);
      // Even a refusal built with an out-of-list reason (a cast) reads back as a listed one.
      const forged = new PrincipalRefusedError(input as PrincipalRefusalReason, 'x');
      expect(closed.has(refusalReasonOf(forged))).toBe(true);
    }
    for (const r of PRINCIPAL_REFUSAL_REASONS) expect(principalRefusalReason(r)).toBe(r);
    expect(refusalReasonOf(new ToolgateError('INVALID_PRINCIPAL', 'x'))).toBe('other');
    expect(refusalReasonOf('a string')).toBe('other');
  });
});
