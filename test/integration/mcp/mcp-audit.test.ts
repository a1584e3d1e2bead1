import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../../libs/adapters/postgres/audit-store.js';
import { migrate } from '../../../libs/adapters/postgres/migrate.js';
import type { AuditRecordEvent } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { silentLogger } from '../../../libs/ports/logger.js';
import { createAuditSink, type AuditSink } from '../../../services/audit-sink/audit-sink.js';
import { EXIT } from '../../../services/cli/cli-error.js';
import {
  UNAUTHENTICATED_PRINCIPAL,
  UNIDENTIFIED_TENANT,
} from '../../../services/mcp-gateway/request-audit.js';
import { schemaRegistryUrl } from '../../helpers/env.js';
import { createTestKafka, type TestKafka } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { createTestSchema, type TestSchema } from '../../helpers/postgres.js';
import { scanForSecrets, type SecretFinding } from '../../helpers/secrets-scan.js';
import { cli } from '../../unit/cli/capture.js';
import { eventually } from '../audit-sink/event-stack.js';
import { databaseUrlFor } from '../cli/cli-env.js';
import { testKafkaBus } from '../executor/test-parts.js';
import type { KafkaEventBus } from '../../../libs/bus/kafka/kafka-event-bus.js';
import { connectModern } from './mcp-clients.js';
import { createMcpStack, type McpStack } from './mcp-stack.js';
import { rawToolsCall } from './raw-modern-call.js';

/**
 * Every MCP request in the hash-chained audit: the gateway (wired with the real Kafka audit
 * publisher) publishes one `mcp-gateway` record per request to the audit topic, and the audit sink
 * appends them, beside the executor's records, to the tenants' chains in a fresh Postgres schema.
 */

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const USER_SCOPES = 'mcp:tools orders:read';

/** One hand-written POST to the endpoint (2026-07-28 envelope unless `legacy`), with `token` or none. */
async function rawRequest(
  url: string,
  token: string | undefined,
  request: { readonly method: string; readonly clientName: string; readonly legacy?: boolean },
  params: Record<string, unknown> = {},
): Promise<Response> {
  const body = request.legacy
    ? {
        jsonrpc: '2.0',
        id: 1,
        method: request.method,
        params: {
          protocolVersion: LEGACY,
          capabilities: {},
          clientInfo: { name: request.clientName, version: '1' },
        },
      }
    : {
        jsonrpc: '2.0',
        id: 1,
        method: request.method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: request.clientName, version: '1' },
          },
        },
      };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(request.legacy ? {} : { 'mcp-protocol-version': MODERN, 'mcp-method': request.method }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response;
}

describe('the MCP gateway audits every request in the hash-chained log', () => {
  let stack: McpStack;
  let kafka: TestKafka;
  let bus: KafkaEventBus;
  let db: TestSchema;
  let store: PostgresAuditStore;
  let sink: AuditSink;
  const tenant = uniqueName('acme');
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    stack = await createMcpStack('mcp_audit', { audit: true });
    kafka = createTestKafka('mcp_audit_sink');
    bus = testKafkaBus(kafka, 'mcp_audit_sink');
    const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics: stack.topics });
    db = await createTestSchema('mcp_audit');
    await migrate(db.pool);
    store = new PostgresAuditStore(db.pool);
    sink = createAuditSink({
      subscriber: bus,
      publisher: bus,
      codec,
      topics: stack.topics,
      store,
      logger: silentLogger,
      groupId: uniqueName('mcp_audit_sink'),
      producerId: 'mcp-audit-sink-test',
      backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    });
    await sink.start();
  }, 90_000);

  afterAll(async () => {
    await sink?.stop();
    await bus?.close();
    await kafka?.close();
    await stack?.close();
    await db?.drop();
  });

  it('one record per request: refusals, tools/list, a hidden tool, a confirmation, a call linked to the executor', async () => {
    // A request without a token (2026-07-28).
    expect(
      (await rawRequest(stack.url, undefined, { method: 'tools/list', clientName: 'audit-no-token' })).status,
    ).toBe(401);
    // A token for another audience (2025-11-25 initialize).
    tokens.wrongAudience = await stack.issuer.token({
      sub: 'user-audit-aud',
      tenant,
      scope: USER_SCOPES,
      aud: 'https://other.example/mcp',
    });
    expect(
      (
        await rawRequest(stack.url, tokens.wrongAudience, {
          method: 'initialize',
          clientName: 'audit-wrong-audience',
          legacy: true,
        })
      ).status,
    ).toBe(401);
    // A valid token without mcp:tools: 403, and the caller is known.
    tokens.noScope = await stack.issuer.token({ sub: 'user-audit-403', tenant, scope: 'orders:read' });
    expect(
      (
        await rawRequest(
          stack.url,
          tokens.noScope,
          { method: 'tools/call', clientName: 'audit-no-scope' },
          {
            name: 'get_order_status',
            arguments: { order_id: 'O-403' },
          },
        )
      ).status,
    ).toBe(403);
    // A body that is not JSON.
    tokens.badJson = await stack.issuer.token({ sub: 'user-audit-json', tenant, scope: USER_SCOPES });
    const badJson = await fetch(stack.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${tokens.badJson}`,
      },
      body: '{"jsonrpc": "2.0", "method": ',
    });
    await badJson.arrayBuffer();
    expect(badJson.status).toBe(400);
    // tools/list, a hidden tool refused by name, and a call that runs, through the official client.
    tokens.user = await stack.issuer.token({ sub: 'user-audit-ada', tenant, scope: USER_SCOPES });
    const marker = `O-audit-${Date.now()}`;
    const client = await connectModern(stack.url, tokens.user);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_order_status']);
      expect((await client.callTool('purge_tenant', { confirm: true })).isError).toBe(true);
      expect((await client.callTool('get_order_status', { order_id: marker })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
    // A destructive tool asks for a confirmation first.
    tokens.admin = await stack.issuer.token({
      sub: 'admin-audit-dan',
      tenant,
      scope: 'mcp:tools orders:read admin:purge',
    });
    const asked = await rawToolsCall(stack.url, tokens.admin, {
      name: 'purge_tenant',
      arguments: { confirm: true },
    });
    expect(asked.result?.resultType).toBe('input_required');
    // Last: once its record is on the (one-partition) topic, every earlier one is too.
    expect(
      (await rawRequest(stack.url, undefined, { method: 'ping', clientName: 'audit-last' })).status,
    ).toBe(401);
    await stack.waitFor('audit', (a) => a.source === 'mcp-gateway' && a.client?.name === 'audit-last');

    const all = await stack.waitFor('audit', () => true);
    const gateway = all.filter((a) => a.source === 'mcp-gateway');
    // One per request the gateway reported, no more.
    expect(gateway).toHaveLength(stack.records.length);
    expect(new Set(gateway.map((a) => a.recordId)).size).toBe(gateway.length);
    const only = (predicate: (a: AuditRecordEvent) => boolean): AuditRecordEvent => {
      const found = gateway.filter(predicate);
      expect(found).toHaveLength(1);
      return found[0]!;
    };
    const clientOf = (name: string, protocolVersion: string, method: string) => ({
      name,
      protocolVersion,
      method,
    });

    expect(only((a) => a.client?.name === 'audit-no-token')).toMatchObject({
      tool: 'mcp:tools/list',
      principalId: UNAUTHENTICATED_PRINCIPAL,
      tenant: UNIDENTIFIED_TENANT,
      outcome: 'UNAUTHORIZED',
      errorCode: 'INVALID_PRINCIPAL',
      argumentsJson: '{}',
      client: clientOf('audit-no-token', MODERN, 'tools/list'),
      producerId: expect.stringMatching(/^mcp.gateway/) as unknown,
    });
    expect(JSON.parse(only((a) => a.client?.name === 'audit-no-token').resultJson!)).toEqual({
      requestOutcome: 'unauthenticated',
      reason: 'invalid_request',
    });
    expect(only((a) => a.client?.name === 'audit-wrong-audience')).toMatchObject({
      tool: 'mcp:initialize',
      principalId: UNAUTHENTICATED_PRINCIPAL,
      tenant: UNIDENTIFIED_TENANT,
      outcome: 'UNAUTHORIZED',
      client: clientOf('audit-wrong-audience', LEGACY, 'initialize'),
    });
    expect(only((a) => a.client?.name === 'audit-no-scope')).toMatchObject({
      tool: 'get_order_status',
      principalId: 'user-audit-403',
      tenant,
      outcome: 'UNAUTHORIZED',
      errorCode: 'UNAUTHORIZED',
      client: clientOf('audit-no-scope', MODERN, 'tools/call'),
    });
    expect(only((a) => a.principalId === 'user-audit-json')).toMatchObject({
      tenant,
      outcome: 'SCHEMA_INVALID',
      resultJson: JSON.stringify({ requestOutcome: 'rejected', reason: 'parse_error' }),
    });
    const byAda = (method: string, tool?: string) => (a: AuditRecordEvent) =>
      a.principalId === 'user-audit-ada' &&
      a.client?.method === method &&
      (tool === undefined || a.tool === tool);
    expect(only(byAda('tools/list'))).toMatchObject({
      tool: 'mcp:tools/list',
      tenant,
      outcome: 'SUCCESS',
      errorCode: null,
      client: clientOf('toolgate-test-modern', MODERN, 'tools/list'),
    });
    const hidden = only(byAda('tools/call', 'purge_tenant'));
    expect(hidden).toMatchObject({
      outcome: 'UNKNOWN_TOOL',
      errorCode: 'UNKNOWN_TOOL',
      argumentsJson: '{}',
      client: clientOf('toolgate-test-modern', MODERN, 'tools/call'),
    });
    const called = only(byAda('tools/call', 'get_order_status'));
    expect(called).toMatchObject({
      outcome: 'SUCCESS',
      argumentsJson: '{}',
      client: clientOf('toolgate-test-modern', MODERN, 'tools/call'),
    });
    expect(only((a) => a.principalId === 'admin-audit-dan')).toMatchObject({
      tool: 'purge_tenant',
      outcome: 'POLICY_VIOLATION',
      resultJson: JSON.stringify({ requestOutcome: 'confirmation-required' }),
      client: clientOf('toolgate-raw-test', MODERN, 'tools/call'),
    });

    // The successful call's gateway record and the executor's share the call id (and key, trace).
    const [executor] = await stack.waitFor(
      'audit',
      (a) => a.source === 'executor' && a.callId === called.callId,
    );
    expect(executor).toMatchObject({
      tool: 'get_order_status',
      principalId: 'user-audit-ada',
      tenant,
      outcome: 'SUCCESS',
      idempotencyKey: called.idempotencyKey,
      traceId: called.traceId,
      client: null,
    });
    const [published] = await stack.waitFor('calls', (c) => c.argumentsJson.includes(marker));
    expect(published!.callId).toBe(called.callId);
    // The refused hidden tool was never published: nothing else has its call id.
    expect(all.filter((a) => a.callId === hidden.callId)).toHaveLength(1);

    // Stored by the audit sink, in the tenants' chains, and the chains verify.
    const stored = await eventually('every gateway record stored', async () => {
      const rows = await store.query({ source: 'mcp-gateway', limit: 1_000 });
      return rows.length >= gateway.length ? rows : undefined;
    });
    expect(stored).toHaveLength(gateway.length);
    expect(new Set(stored.map((r) => r.chain))).toEqual(new Set([tenant, UNIDENTIFIED_TENANT]));
    expect(stored.find((r) => r.record.callId === called.callId)!.record.client).toEqual(
      clientOf('toolgate-test-modern', MODERN, 'tools/call'),
    );
    expect((await store.query({ callId: called.callId, limit: 10 })).map((r) => r.source).sort()).toEqual([
      'executor',
      'mcp-gateway',
    ]);
    expect(await store.verify()).toMatchObject({ ok: true });
    const verified = await cli(['audit', 'verify', '--json'], {
      env: { DATABASE_URL: databaseUrlFor(db.schema) },
    });
    expect(verified.code).toBe(EXIT.ok);
    expect(verified.json()).toMatchObject({ ok: true });
  }, 120_000);

  it('keeps no byte of any bearer token on the audit topic or in the stored rows', async () => {
    expect(Object.keys(tokens).length).toBeGreaterThanOrEqual(5);
    const secrets: Record<string, string> = {};
    for (const [name, token] of Object.entries(tokens)) {
      secrets[name] = token;
      token.split('.').forEach((part, i) => (secrets[`${name} part ${i}`] = part));
    }
    const rows = await db.pool.query('SELECT * FROM audit_records');
    expect(rows.rows.length).toBeGreaterThan(0);
    const findings: SecretFinding[] = [];
    scanForSecrets(
      'audit topic',
      Buffer.concat([...stack.raw('audit')]).toString('latin1'),
      secrets,
      findings,
    );
    scanForSecrets('audit rows', JSON.stringify(rows.rows), secrets, findings);
    expect(findings).toEqual([]);
    for (const token of Object.values(tokens)) {
      expect(Buffer.concat([...stack.raw('audit')]).includes(Buffer.from(token.split('.')[2]!))).toBe(false);
    }
  });
});
