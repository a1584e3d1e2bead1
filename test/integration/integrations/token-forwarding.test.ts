import { generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPrincipalVerifier, signPrincipal } from '../../../libs/auth/index.js';
import { systemClock } from '../../../libs/core/system-clock.js';
import type { ExecutionContext, Principal } from '../../../libs/core/types.js';
import type { ToolCallRequestedEvent } from '../../../libs/events/contracts.js';
import { LocalEventCodec } from '../../../libs/events/local-codec.js';
import { forwardedUserToken, withDelegatedToken } from '../../../libs/integrations/forwarded-token.js';
import { RedisTokenReferenceStore } from '../../../libs/integrations/redis-token-references.js';
import { RestClient } from '../../../libs/integrations/rest-client.js';
import { restPath } from '../../../libs/integrations/rest-path.js';
import { newTokenReference } from '../../../libs/integrations/token-reference-store.js';
import type { GuardPipeline } from '../../../libs/pipeline/guard-pipeline.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import { createTestRedis, type TestRedis } from '../../helpers/redis.js';
import { startFakeDocumentsApi, type FakeDocumentsApi } from './fake-documents-api.js';
import { singleToolPipeline } from './single-tool-pipeline.js';

const ISSUER = 'https://agents.example.test';
const AUDIENCE = 'toolgate-executor';

let api: FakeDocumentsApi;
let redis: TestRedis;
let refs: RedisTokenReferenceStore;
let keys: { privateKey: CryptoKey; publicKey: CryptoKey };
let pipeline: GuardPipeline;
let codec: LocalEventCodec;

/**
 * A tool that acts with the end user's own authority: it resolves the reference the
 * verified principal carries into the user's token and calls the documents API with it, so the API's
 * own access control decides. Its retry policy would retry server errors; a refusal is not one.
 */
function readSharedDocumentTool(docs: RestClient) {
  return defineTool({
    name: 'read_shared_document',
    version: '1.0.0',
    description: "Read one document from the documents service by id, with the user's own access rights.",
    input: z.strictObject({
      document_id: z.string().min(1).max(64).describe('The document id, e.g. "D-100".'),
    }),
    output: z.object({ id: z.string(), title: z.string(), body: z.string() }),
    scopes: ['documents:read'],
    owner: 'knowledge-team',
    stateChanging: false,
    downstream: 'documents-api',
    timeoutMs: 2_000,
    retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
    auditFields: ['document_id'],
    execute: async (args, inv) => {
      const token = await forwardedUserToken(refs, inv.ctx.principal);
      return docs.request({
        method: 'GET',
        path: restPath`/documents/${args.document_id}`,
        auth: { kind: 'user', token },
        response: z.object({ id: z.string(), title: z.string(), body: z.string() }),
        signal: inv.signal,
        wordings: {
          notFound: {
            message: 'There is no such document.',
            suggestedFix: 'Use a document id the user gave.',
          },
          forbidden: { message: 'The documents service does not let this user read that document.' },
        },
      });
    },
  });
}

beforeAll(async () => {
  api = await startFakeDocumentsApi();
  api.addDocument('D-100', {
    tenant: 't1',
    title: 'Board minutes',
    body: 'Confidential minutes.',
    readers: ['alice'],
  });
  redis = createTestRedis('tref');
  refs = new RedisTokenReferenceStore(redis.redis, { keyPrefix: redis.prefix });
  keys = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  codec = new LocalEventCodec();
  const docs = new RestClient({
    downstream: 'documents-api',
    baseUrl: api.url,
    clock: systemClock,
    timeoutMs: 2_000,
  });
  pipeline = singleToolPipeline(readSharedDocumentTool(docs), 'executor-forwarding');
});

afterAll(async () => {
  await api.close();
  const left = await redis.redis.keys(`${redis.prefix}*`);
  if (left.length > 0) await redis.redis.del(...left);
  await redis.close();
});

beforeEach(() => {
  api.seen.length = 0;
});

function agentFor(user: string): Principal {
  return {
    id: 'agent-docs',
    tenant: 't1',
    kind: 'agent',
    scopes: ['documents:read'],
    roles: [],
    onBehalfOf: user,
  };
}

/**
 * The agent backend's side and the executor's side of one call, with Kafka's bytes in between: the
 * user's token is deposited, the principal carrying only the reference is signed into the event, the
 * event is encoded as it would be published, then decoded, verified and run.
 */
async function roundTrip(principal: Principal, callId: string, documentId = 'D-100') {
  const assertion = await signPrincipal(principal, keys.privateKey, {
    issuer: ISSUER,
    audience: AUDIENCE,
    ttlSeconds: 300,
  });
  const args = { document_id: documentId };
  const event: ToolCallRequestedEvent = {
    callId,
    providerCallId: `p-${callId}`,
    tool: 'read_shared_document',
    toolVersion: null,
    argumentsJson: JSON.stringify(args),
    tenant: 't1',
    taskId: `task-${callId}`,
    step: 0,
    index: 0,
    idempotencyKey: 'tg1:0000',
    resourceKey: `t1:task:task-${callId}`,
    principalAssertion: assertion,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    replyTopic: 'toolgate.results',
    replyPartition: 0,
    deadlineMs: null,
    requestedAtMs: Date.now(),
  };
  const bytes = await codec.encode('calls', event);
  const received = await codec.decode('calls', bytes);
  const verified = await createPrincipalVerifier({
    keys: { k1: keys.publicKey },
    issuer: ISSUER,
    audience: AUDIENCE,
  }).verify(received.principalAssertion);
  const ctx: ExecutionContext = {
    principal: verified,
    tenant: received.tenant,
    taskId: received.taskId,
    step: received.step,
    index: received.index,
    traceId: received.traceId,
  };
  const run = await pipeline.run(
    {
      id: callId,
      name: received.tool,
      arguments: JSON.parse(received.argumentsJson) as Record<string, unknown>,
    },
    ctx,
  );
  return { bytes, assertion, verified, ...run };
}

/** Every encoding of `token` a careless serializer could leave in bytes. */
function encodings(token: string): string[] {
  const raw = Buffer.from(token);
  return [
    token,
    raw.toString('base64'),
    raw.toString('base64url'),
    raw.toString('hex'),
    encodeURIComponent(token),
  ];
}

describe("token forwarding: the downstream sees the end user's own authority", () => {
  it('a user with access reads the document; only an opaque reference travels in the event', async () => {
    const aliceToken = api.signIn('alice', 't1');
    const principal = await withDelegatedToken(refs, agentFor('alice'), aliceToken, 60_000);
    const { bytes, assertion, verified, result, audit } = await roundTrip(principal, 'fw-1');

    expect(result.outcome).toBe('SUCCESS');
    expect(result.payload).toEqual({ id: 'D-100', title: 'Board minutes', body: 'Confidential minutes.' });
    expect(api.seen).toEqual([{ path: '/documents/D-100', user: 'alice', status: 200 }]);
    expect(verified.delegationRef).toBe(principal.delegationRef);

    // The token is in none of the bytes published to Kafka, in any encoding, nor in the signed
    // assertion's payload, the result or the audit record.
    const claims = Buffer.from(assertion.split('.')[1]!, 'base64url').toString();
    expect(claims).toContain(principal.delegationRef!);
    const haystacks = [
      bytes.toString('latin1'),
      bytes.toString('utf8'),
      claims,
      JSON.stringify(result),
      JSON.stringify(audit),
    ];
    for (const form of encodings(aliceToken)) {
      for (const hay of haystacks) expect(hay).not.toContain(form);
      expect(bytes.includes(Buffer.from(form))).toBe(false);
    }
  });

  it('a user without access is refused BY THE DOWNSTREAM: CALLER_ERROR, not retried', async () => {
    const bobToken = api.signIn('bob', 't1');
    const principal = await withDelegatedToken(refs, agentFor('bob'), bobToken, 60_000);
    const { result } = await roundTrip(principal, 'fw-2');
    expect(result.outcome).toBe('EXECUTION_ERROR');
    expect(result.error).toMatchObject({
      code: 'CALLER_ERROR',
      retryable: false,
      message: 'The documents service does not let this user read that document.',
    });
    expect(result.error?.suggestedFix).toBeUndefined();
    // One request, with Bob's authority, refused by the API itself; the retry policy did not repeat it.
    expect(result.toolInvocations).toBe(1);
    expect(api.seen).toEqual([{ path: '/documents/D-100', user: 'bob', status: 403 }]);
  });

  it('an expired reference is refused before any request leaves', async () => {
    const aliceToken = api.signIn('alice', 't1');
    const principal = await withDelegatedToken(refs, agentFor('alice'), aliceToken, 50);
    await new Promise((r) => setTimeout(r, 120));
    const { result } = await roundTrip(principal, 'fw-3');
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(result.error).toMatchObject({ code: 'UNAUTHORIZED', retryable: false });
    expect(result.error?.message).toMatch(/sign in again/);
    expect(api.seen).toEqual([]);
  });

  it('an unknown reference, or none, is refused before any request leaves', async () => {
    const unknown = await roundTrip({ ...agentFor('alice'), delegationRef: newTokenReference() }, 'fw-4');
    expect(unknown.result).toMatchObject({ outcome: 'UNAUTHORIZED', toolInvocations: 1 });
    const none = await roundTrip(agentFor('alice'), 'fw-5');
    expect(none.result.outcome).toBe('UNAUTHORIZED');
    expect(api.seen).toEqual([]);
  });

  it("a reference deposited for another user does not lend that user's authority", async () => {
    const aliceToken = api.signIn('alice', 't1');
    const alices = await withDelegatedToken(refs, agentFor('alice'), aliceToken, 60_000);
    const { result } = await roundTrip({ ...agentFor('bob'), delegationRef: alices.delegationRef! }, 'fw-6');
    expect(result.outcome).toBe('UNAUTHORIZED');
    expect(api.seen).toEqual([]);
  });

  it("the user's own token expiring at the downstream is its refusal too (401), not retried", async () => {
    const stale = api.signIn('alice', 't1', 1);
    await new Promise((r) => setTimeout(r, 10));
    const principal = await withDelegatedToken(refs, agentFor('alice'), stale, 60_000);
    const { result } = await roundTrip(principal, 'fw-7');
    expect(result.error).toMatchObject({ code: 'CALLER_ERROR', retryable: false });
    expect(api.seen).toEqual([{ path: '/documents/D-100', user: undefined, status: 401 }]);
  });
});

describe('RedisTokenReferenceStore', () => {
  it('expires references in Redis itself and keys them by hash, not by the reference', async () => {
    const ref = await refs.put('some-user-token', { ttlMs: 30_000, tenant: 't1', subject: 'alice' });
    const stored = await redis.redis.keys(`${redis.prefix}tref:*`);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.some((k) => k.includes(ref))).toBe(false);
    const ttls = await Promise.all(stored.map((k) => redis.redis.pttl(k)));
    expect(ttls.every((t) => t > 0 && t <= 60_000)).toBe(true);
    expect((await refs.resolve(ref))?.token).toBe('some-user-token');
  });

  it('in one-time mode, of ten concurrent resolves exactly one gets the token', async () => {
    const once = new RedisTokenReferenceStore(redis.redis, { keyPrefix: redis.prefix, mode: 'once' });
    const ref = await once.put('one-shot-token', { ttlMs: 30_000, tenant: 't1', subject: 'alice' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => once.resolve(ref)));
    expect(answers.filter((a) => a !== undefined)).toHaveLength(1);
    expect(await once.resolve(ref)).toBeUndefined();
  });
});
