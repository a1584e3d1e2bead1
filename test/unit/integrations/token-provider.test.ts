import { inspect } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import { ManualClock } from '../../../libs/core/manual-clock.js';
import {
  createClientCredentialsProvider,
  type ClientCredentialsOptions,
} from '../../../libs/integrations/client-credentials-provider.js';
import { MemorySecretsSource } from '../../../libs/integrations/memory-secrets.js';
import { clientCredentialNames, type SecretsSource } from '../../../libs/integrations/secrets-source.js';
import { json, scriptedServer, type ScriptedServer } from './scripted-server.js';

const T1_SECRET = 's3cr3t-of-tenant-one-9f8e7d';
const T2_SECRET = 's3cr3t-of-tenant-two-1a2b3c';

let server: ScriptedServer;
let issued: string[];

beforeAll(async () => {
  server = await scriptedServer();
});
afterAll(async () => {
  await server.close();
});

/** A token endpoint that knows each tenant's client and answers fresh opaque tokens. */
function tokenEndpoint(expiresIn = 3_600): void {
  server.handle((req, res) => {
    const [id, secret] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':')
      .map(decodeURIComponent);
    const form = new URLSearchParams(req.body);
    const known =
      (id === 'client-t1' && secret === T1_SECRET) || (id === 'client-t2' && secret === T2_SECRET);
    if (!known || form.get('grant_type') !== 'client_credentials') {
      // Like some real endpoints, it echoes what it was sent: none of it may reach a log or an error.
      return json(res, 401, { error: 'invalid_client', detail: `bad secret ${secret}` });
    }
    const token = `at-${id}-${form.get('audience')}-${issued.length + 1}-zz9`;
    issued.push(token);
    json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: expiresIn });
  });
}

function secrets(): MemorySecretsSource {
  const t1 = clientCredentialNames('t1', 'documents-api');
  const t2 = clientCredentialNames('t2', 'documents-api');
  return new MemorySecretsSource({
    [t1.clientId]: 'client-t1',
    [t1.clientSecret]: T1_SECRET,
    [t2.clientId]: 'client-t2',
    [t2.clientSecret]: T2_SECRET,
  });
}

/** A provider against the scripted token endpoint, with the tenants' credentials unless `secrets` is given. */
function provider(
  options: Omit<ClientCredentialsOptions, 'tokenUrl' | 'secrets'> & { readonly secrets?: SecretsSource },
) {
  return createClientCredentialsProvider({
    tokenUrl: `${server.url}/oauth/token`,
    ...options,
    secrets: options.secrets ?? secrets(),
  });
}

function capturedLogger(): { lines: string[]; logger: pino.Logger } {
  const lines: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  return { lines, logger };
}

beforeEach(() => {
  issued = [];
  server.seen.length = 0;
  tokenEndpoint();
});

describe('client credentials token provider', () => {
  it('fetches once per tenant and audience, then serves the cached token', async () => {
    const clock = new ManualClock(1_000_000);
    const tokens = provider({ clock });
    const a = await tokens.getToken('t1', 'documents-api');
    const b = await tokens.getToken('t1', 'documents-api');
    expect(a).toBe(b);
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.body).toBe('grant_type=client_credentials&audience=documents-api');
  });

  it("uses each tenant's own credentials", async () => {
    const clock = new ManualClock(0);
    const tokens = provider({ clock });
    expect(await tokens.getToken('t1', 'documents-api')).toMatch(/^at-client-t1-/);
    expect(await tokens.getToken('t2', 'documents-api')).toMatch(/^at-client-t2-/);
    await expect(tokens.getToken('t3', 'documents-api')).rejects.toMatchObject({
      code: 'INTERNAL',
      retryable: false,
    });
    expect(server.seen).toHaveLength(2);
  });

  it('refreshes before expiry (margin capped at half the lifetime), not after every call', async () => {
    const clock = new ManualClock(0);
    const tokens = provider({ clock, refreshBeforeExpiryMs: 60_000 });
    const first = await tokens.getToken('t1', 'documents-api');
    await clock.advance(3_600_000 - 60_001);
    expect(await tokens.getToken('t1', 'documents-api')).toBe(first);
    await clock.advance(1);
    const second = await tokens.getToken('t1', 'documents-api');
    expect(second).not.toBe(first);
    expect(server.seen).toHaveLength(2);

    tokenEndpoint(10);
    const short = provider({ clock });
    const s1 = await short.getToken('t1', 'documents-api');
    await clock.advance(4_999);
    expect(await short.getToken('t1', 'documents-api')).toBe(s1);
    await clock.advance(1);
    expect(await short.getToken('t1', 'documents-api')).not.toBe(s1);
  });

  it('merges concurrent fetches into one', async () => {
    const clock = new ManualClock(0);
    const tokens = provider({ clock });
    const all = await Promise.all(Array.from({ length: 20 }, () => tokens.getToken('t1', 'documents-api')));
    expect(new Set(all).size).toBe(1);
    expect(server.seen).toHaveLength(1);
  });

  it('picks up a rotated secret at the next fetch, and drops a token the downstream revoked', async () => {
    const clock = new ManualClock(0);
    const source = secrets();
    const tokens = provider({ secrets: source, clock });
    const first = await tokens.getToken('t1', 'documents-api');
    source.set(clientCredentialNames('t1', 'documents-api').clientSecret, 'rotated-but-unknown');
    tokens.invalidate('t1', 'documents-api', 'some-other-token');
    expect(await tokens.getToken('t1', 'documents-api')).toBe(first);
    tokens.invalidate('t1', 'documents-api', first);
    await expect(tokens.getToken('t1', 'documents-api')).rejects.toMatchObject({
      code: 'CALLER_ERROR',
      retryable: false,
    });
  });

  it('keeps serving a still-valid token when a refresh fails', async () => {
    const clock = new ManualClock(0);
    const tokens = provider({ clock });
    const first = await tokens.getToken('t1', 'documents-api');
    server.handle((_req, res) => json(res, 503, {}));
    await clock.advance(3_600_000 - 30_000);
    expect(await tokens.getToken('t1', 'documents-api')).toBe(first);
    await clock.advance(30_000);
    await expect(tokens.getToken('t1', 'documents-api')).rejects.toMatchObject({ code: 'SERVER_ERROR' });
  });

  it('an answer of the wrong shape is SERVER_ERROR', async () => {
    server.handle((_req, res) => json(res, 200, { access_token: 'x', token_type: 'mac', expires_in: 60 }));
    const tokens = provider({ clock: new ManualClock(0) });
    await expect(tokens.getToken('t1', 'documents-api')).rejects.toMatchObject({ code: 'SERVER_ERROR' });
  });

  it('never logs a client secret or a token, nor puts one in an error', async () => {
    const { lines, logger } = capturedLogger();
    const clock = new ManualClock(0);
    const source = secrets();
    const tokens = provider({ secrets: source, clock, logger });
    await tokens.getToken('t1', 'documents-api');
    await tokens.getToken('t2', 'documents-api');
    // A refused secret the endpoint echoes back, an outage, and an unreachable endpoint.
    source.set(clientCredentialNames('t1', 'documents-api').clientSecret, `${T1_SECRET}-old`);
    await clock.advance(3_600_000);
    const errors: unknown[] = [];
    errors.push(await tokens.getToken('t1', 'documents-api').catch((e: unknown) => e));
    server.handle((_req, res) => json(res, 500, { secret: T2_SECRET }));
    errors.push(await tokens.getToken('t2', 'documents-api').catch((e: unknown) => e));
    const dead = createClientCredentialsProvider({
      tokenUrl: 'http://127.0.0.1:1/oauth/token',
      secrets: source,
      clock,
      logger,
    });
    errors.push(await dead.getToken('t2', 'documents-api').catch((e: unknown) => e));

    expect(errors.every((e) => e instanceof ToolgateError)).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(5);
    const everything = [
      ...lines,
      ...errors.map((e) => inspect(e, { depth: 10 })),
      ...errors.map((e) => JSON.stringify(e)),
      ...errors.map((e) => String((e as Error).message)),
    ].join('\n');
    expect(issued.length).toBe(2);
    for (const secret of [T1_SECRET, T2_SECRET, ...issued]) expect(everything).not.toContain(secret);
    expect(everything).not.toContain(Buffer.from(`client-t1:${T1_SECRET}`).toString('base64'));
  });
});
