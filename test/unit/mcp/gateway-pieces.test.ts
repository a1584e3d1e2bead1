import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createLocalJWKSet, SignJWT, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { MemorySingleUseStore } from '../../../libs/adapters/memory/single-use-store.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import { createBearerCheck, tokenScopes } from '../../../services/mcp-gateway/bearer-auth.js';
import { OUTCOME_UNKNOWN_TEXT, toMcpCallResult } from '../../../services/mcp-gateway/call-result.js';
import { mintConfirmation, redeemConfirmation } from '../../../services/mcp-gateway/confirmation.js';
import { CLIENT_KEY_META, clientKeyOf, logicalTaskId } from '../../../services/mcp-gateway/logical-call.js';
import {
  principalFromClaims,
  PrincipalMappingError,
} from '../../../services/mcp-gateway/principal-mapping.js';
import { requestFacts } from '../../../services/mcp-gateway/request-facts.js';

const RESOURCE = 'https://tools.example.com/mcp';
const ISSUER = 'https://auth.example.com';

describe('bearer check', () => {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwks = createLocalJWKSet({
    keys: [{ ...(key.publicKey.export({ format: 'jwk' }) as JWK), kid: 'k' }],
  });
  const check = createBearerCheck({
    issuer: ISSUER,
    resource: RESOURCE,
    jwks,
    requiredScopes: ['mcp:tools'],
    metadataUrl: 'https://tools.example.com/.well-known/oauth-protected-resource/mcp',
  });
  const token = (claims: Record<string, unknown>, iss = ISSUER) =>
    new SignJWT({ scope: 'mcp:tools a:b', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .setIssuer(iss)
      .setSubject('u1')
      .setAudience(RESOURCE)
      .setExpirationTime('5m')
      .sign(key.privateKey);

  it('accepts a token for this resource and reads its scopes', async () => {
    const verdict = await check(`Bearer ${await token({})}`);
    expect(verdict.ok && verdict.token.scopes).toEqual(['mcp:tools', 'a:b']);
  });

  it('refuses a missing header, another issuer, and a short scope, with the right status', async () => {
    expect(await check(undefined)).toMatchObject({
      ok: false,
      refusal: { status: 401, error: 'invalid_request' },
    });
    expect(await check('Basic abc')).toMatchObject({ ok: false, refusal: { status: 401 } });
    expect(await check(`Bearer ${await token({}, 'https://evil.example')}`)).toMatchObject({
      ok: false,
      refusal: { status: 401, error: 'invalid_token' },
    });
    const short = await check(`Bearer ${await token({ scope: 'a:b' })}`);
    expect(short).toMatchObject({ ok: false, refusal: { status: 403, error: 'insufficient_scope' } });
    expect(!short.ok && short.refusal.wwwAuthenticate).toContain('scope="mcp:tools"');
  });

  it('reads scopes from `scope` or an `scp` array', () => {
    expect(tokenScopes({ scope: 'a  b' })).toEqual(['a', 'b']);
    expect(tokenScopes({ scp: ['x', 3, 'y'] })).toEqual(['x', 'y']);
    expect(tokenScopes({})).toEqual([]);
  });
});

describe('principal mapping', () => {
  it('maps claims by configuration, dropping the gateway scopes and applying the prefix', () => {
    expect(
      principalFromClaims(
        { sub: 'u1', org: 'acme', roles: 'agent admin' },
        ['mcp:tools', 'tg:orders:read', 'other'],
        {
          tenantClaim: 'org',
          gatewayScopes: ['mcp:tools'],
          scopePrefix: 'tg:',
        },
      ),
    ).toEqual({ id: 'u1', tenant: 'acme', kind: 'user', scopes: ['orders:read'], roles: ['agent', 'admin'] });
  });

  it('refuses claims without a tenant instead of mapping them to nothing', () => {
    expect(() => principalFromClaims({ sub: 'u1' }, [], {})).toThrow(PrincipalMappingError);
    expect(principalFromClaims({ sub: 'u1' }, [], { tenant: 'fixed' }).tenant).toBe('fixed');
  });
});

describe('MCP results', () => {
  const base = { callId: 'c', tool: 't', toolInvocations: 1 } as const;
  it('gives a success its payload as text and structured content', () => {
    const r = toMcpCallResult({ ...base, outcome: 'SUCCESS', payload: { a: 1 } }, true);
    expect(r).toMatchObject({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } });
    expect(r.isError).toBeUndefined();
    expect(
      toMcpCallResult({ ...base, outcome: 'SUCCESS', payload: { a: 1 } }, false).structuredContent,
    ).toBeUndefined();
  });

  it('never calls an unresolved call failed or retryable', () => {
    const r = toMcpCallResult(
      { ...base, outcome: 'UNRESOLVED', error: { code: 'UNRESOLVED', message: 'm', retryable: false } },
      true,
    );
    expect(r.content[0]!.text.startsWith(OUTCOME_UNKNOWN_TEXT)).toBe(true);
    expect(r._meta['io.toolgate/result'].outcome).toBe('UNRESOLVED');
  });
});

describe('logical calls', () => {
  const p = { id: 'u1' };
  it('is one task per principal, tool, canonical arguments and client key', () => {
    expect(logicalTaskId(p, 't', { a: 1, b: 2 }, undefined)).toBe(
      logicalTaskId(p, 't', { b: 2, a: 1 }, undefined),
    );
    expect(logicalTaskId(p, 't', { a: 1 }, 'k1')).not.toBe(logicalTaskId(p, 't', { a: 1 }, 'k2'));
    expect(logicalTaskId(p, 't', { a: 1 }, undefined)).not.toBe(
      logicalTaskId({ id: 'u2' }, 't', { a: 1 }, undefined),
    );
  });

  it('takes only well-formed client keys', () => {
    expect(clientKeyOf({ [CLIENT_KEY_META]: 'abc' })).toBe('abc');
    expect(clientKeyOf({ [CLIENT_KEY_META]: 'has space' })).toBeUndefined();
    expect(clientKeyOf({ [CLIENT_KEY_META]: 7 })).toBeUndefined();
  });
});

describe('request facts', () => {
  it('reads method, revision and client from a 2026 envelope or a 2025 initialize', () => {
    expect(
      requestFacts(
        {
          method: 'tools/call',
          params: {
            name: 'x',
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'ide' },
            },
          },
        },
        {},
      ),
    ).toEqual({ method: 'tools/call', protocolVersion: '2026-07-28', clientName: 'ide', tool: 'x' });
    expect(
      requestFacts(
        { method: 'initialize', params: { protocolVersion: '2025-11-25', clientInfo: { name: 'c' } } },
        {},
      ),
    ).toMatchObject({ method: 'initialize', protocolVersion: '2025-11-25', clientName: 'c' });
    expect(requestFacts(undefined, { 'mcp-method': 'weird/method' }).method).toBe('other');
  });
});

describe('confirmation states', () => {
  const settings = { secret: randomBytes(32), store: new MemorySingleUseStore(systemClock) };
  const call = {
    principal: { id: 'u1', tenant: 'acme' },
    tool: 'purge',
    version: '1.0.0',
    args: { all: true },
  };

  it('redeem once per holder; other holders see a replay', async () => {
    const state = await mintConfirmation(settings, call);
    expect(await redeemConfirmation(settings, state, call, 'h1')).toEqual({ ok: true });
    expect(await redeemConfirmation(settings, state, call, 'h1')).toEqual({ ok: true });
    expect(await redeemConfirmation(settings, state, call, 'h2')).toEqual({ ok: false, refusal: 'replayed' });
  });

  it('refuses other arguments, another secret and an expired state', async () => {
    const state = await mintConfirmation(settings, call);
    expect(await redeemConfirmation(settings, state, { ...call, args: { all: false } }, 'h')).toEqual({
      ok: false,
      refusal: 'mismatch',
    });
    expect(await redeemConfirmation({ ...settings, secret: randomBytes(32) }, state, call, 'h')).toEqual({
      ok: false,
      refusal: 'forged',
    });
    const old = await mintConfirmation({ ...settings, now: () => Date.now() - 3_600_000 }, call);
    expect(await redeemConfirmation(settings, old, call, 'h')).toEqual({ ok: false, refusal: 'expired' });
  });

  it('refuses a secret shorter than 32 bytes', async () => {
    await expect(mintConfirmation({ ...settings, secret: randomBytes(16) }, call)).rejects.toThrow(
      RangeError,
    );
  });
});
