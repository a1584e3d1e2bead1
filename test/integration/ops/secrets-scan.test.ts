import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../libs/observability/logger.js';
import type { EventKind } from '../../../libs/events/contracts.js';
import { RegistryEventCodec } from '../../../libs/events/registry-codec.js';
import { DEMO_PRINCIPALS } from '../../../services/demo/principals.js';
import { openAITurn } from '../../../services/demo/scripted-model.js';
import { runRefundStory } from '../../../services/demo/story.js';
import { DATABASE_URL, REDIS_URL, schemaRegistryUrl } from '../../helpers/env.js';
import { consumeMessages, createTestKafka, type ConsumedMessage } from '../../helpers/kafka.js';
import { uniqueName } from '../../helpers/names.js';
import { scanForSecrets, type SecretFinding } from '../../helpers/secrets-scan.js';
import { startSecretsStack, type SecretsStack } from './secrets-stack.js';

/**
 * No secret in logs, topics, rows or Redis values, end to end on Kafka, the schema registry, Redis and Postgres: the refund
 * story runs (plus calls whose arguments carry token-shaped text) with distinctive credentials in
 * play, every component logging at trace level through the services' logger; then every log line,
 * every byte of every topic, every row of the run's Postgres schema and every Redis value of the run
 * are searched for those credentials. Nothing may be found.
 *
 * Two deliberate exceptions, both on the calls topic only:
 * - its `principalAssertion` field: the signed principal IS the identity statement the executor
 *   verifies (a signature over who is calling, short-lived, audience-bound), not a credential that
 *   unlocks anything; it must appear nowhere else;
 * - the tool arguments: the calls topic carries the model's request verbatim, because the executor
 *   must run it; token-shaped text the model wrote into arguments must not travel any further
 *   (results, audit, dead letters, logs).
 */
const runId = uniqueName('secrets');
const dbPassword = `pw-${randomBytes(12).toString('hex')}`;
const argumentToken = `sk_live_${randomBytes(16).toString('hex')}`;
const argumentJwt = [
  Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url'),
  Buffer.from(`{"sub":"${randomBytes(6).toString('hex')}","scope":"admin"}`).toString('base64url'),
  randomBytes(32).toString('base64url'),
].join('.');
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const privateJwk = privateKey.export({ format: 'jwk' });
const privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const pemBody = privatePem.replace(/-----[A-Z ]+-----|\s/g, '');

const logLines: string[] = [];
const storyLines: string[] = [];
let stack: SecretsStack;

type Finding = SecretFinding;
const scan = scanForSecrets;

async function readTopic(kind: EventKind): Promise<ConsumedMessage[]> {
  const kafka = createTestKafka('secrets-read');
  try {
    const admin = await kafka.admin();
    const offsets = await admin.fetchTopicOffsets(stack.topics[kind]);
    const count = offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
    if (count === 0) return [];
    const consumer = kafka.consumer({
      groupId: kafka.uniqueGroupId(`secrets_${kind}`),
      maxWaitTimeInMs: 100,
    });
    return await consumeMessages(consumer, stack.topics[kind], count);
  } finally {
    await kafka.close();
  }
}

/** Messages on a topic of the run, all partitions. */
async function messageCount(kind: EventKind): Promise<number> {
  const kafka = createTestKafka('secrets-count');
  try {
    const offsets = await (await kafka.admin()).fetchTopicOffsets(stack.topics[kind]);
    return offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  } finally {
    await kafka.close();
  }
}

/**
 * Resolves once the case of `callId` exists, no case of the run is open, and the audit table holds
 * as many records as the audit topic; rejects after a minute saying which was still missing.
 */
async function untilSettled(callId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows: cases } = await stack.pool.query<{ call_id: string | null; state: string }>(
      `SELECT call_id, state FROM "${runId}".reconciliation_cases`,
    );
    const { rows: audit } = await stack.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${runId}".audit_records`,
    );
    const missing = [
      ...(cases.some((c) => c.call_id === callId) ? [] : [`a case for ${callId}`]),
      ...cases.filter((c) => c.state === 'open').map((c) => `case of ${c.call_id} still open`),
      ...(audit[0]!.n >= (await messageCount('audit')) ? [] : ['audit records not all stored']),
    ];
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`not settled within a minute: ${missing.join('; ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const messageText = (m: ConsumedMessage): string =>
  [
    m.key?.toString('latin1') ?? '',
    m.value?.toString('latin1') ?? '',
    ...Object.entries(m.headers ?? {}).map(([k, v]) => `${k}=${String(v)}`),
  ].join('\n');

beforeAll(async () => {
  const logger = createLogger({
    level: 'trace',
    name: 'secrets-scan',
    destination: { write: (line: string) => void logLines.push(line) },
  });
  stack = await startSecretsStack({
    runId,
    databaseUrl: DATABASE_URL.replace('postgres://postgres@', `postgres://postgres:${dbPassword}@`),
    redisUrl: REDIS_URL,
    signingKey: privateKey,
    verifyKey: publicKey,
    logger,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  const kafka = createTestKafka('secrets-cleanup');
  const admin = await kafka.admin();
  await admin.deleteTopics({ topics: Object.values(stack.topics), timeout: 10_000 }).catch(() => undefined);
  await kafka.close();
  const keys = await stack.redis.keys(`${stack.keyPrefix}*`).catch(() => []);
  if (keys.length > 0) await stack.redis.del(...keys).catch(() => undefined);
}, 60_000);

describe('no secret or token in logs, topics, audit or stores', () => {
  it('runs the refund story and token-bearing calls, then finds none of the secrets anywhere', async () => {
    const story = await runRefundStory(stack, (line) => storyLines.push(line));
    expect(story.steps).toHaveLength(5);
    const { supportDesk } = DEMO_PRINCIPALS;
    const probes = await stack.client.runTurn(
      openAITurn('secrets', [
        { tool: 'search_customers', args: { query: `Bearer ${argumentToken}` } },
        { tool: 'search_customers', args: { query: argumentJwt.slice(0, 100) } },
        { tool: 'lookup_order', args: { order_id: argumentToken } },
        { tool: 'issue_refund', args: { order_id: 'O-5512', amount: 1, reason: argumentJwt } },
      ]),
      { principal: supportDesk, taskId: `${runId}-probe`, step: 1 },
    );
    const probeIds = probes.calls.map((c) => c.published?.callId).filter((id): id is string => !!id);
    expect(probeIds).toHaveLength(4);
    await stack.awaitAudited(probeIds);
    storyLines.push(...probes.messages.map((m) => JSON.stringify(m)));
    // A refund whose every attempt goes unanswered: UNRESOLVED, so a dead letter (with the request)
    // and a reconciliation case exist to be scanned too.
    stack.downstreams.faults.payments.hangNext(10);
    const lost = await stack.client.runTurn(
      openAITurn('secrets-lost', [
        { tool: 'issue_refund', args: { order_id: 'O-9001', amount: 5, reason: 'damaged' } },
      ]),
      { principal: supportDesk, taskId: `${runId}-lost`, step: 1 },
    );
    stack.downstreams.faults.payments.heal();
    expect(lost.results.map((r) => r.outcome)).toEqual(['UNRESOLVED']);
    storyLines.push(...lost.messages.map((m) => JSON.stringify(m)));
    // Wait for the reconciler to settle the lost answers (this one's case and the story's are no
    // longer open) and for the sink to store every record on the audit topic, so that what they
    // write is there to be scanned.
    const lostId = lost.calls[0]!.published!.callId;
    await untilSettled(lostId);

    const codec = await RegistryEventCodec.create({ url: schemaRegistryUrl(), topics: stack.topics });
    const calls = await readTopic('calls');
    const assertions = await Promise.all(
      calls.map(async (m) => (await codec.decode('calls', m.value!)).principalAssertion),
    );
    expect(assertions.length).toBeGreaterThanOrEqual(8);
    const credentials: Record<string, string> = {
      'signing key (JWK d)': privateJwk.d!,
      'signing key (PKCS#8 base64)': pemBody,
      'signing key (PEM first line)': pemBody.slice(0, 64),
      'database password': dbPassword,
    };
    for (const [i, assertion] of assertions.entries()) {
      credentials[`principal assertion #${i}`] = assertion;
      credentials[`principal assertion #${i} signature`] = assertion.split('.')[2]!;
    }
    const everything = {
      ...credentials,
      'token in arguments': argumentToken,
      'JWT in arguments': argumentJwt,
      'JWT in arguments (signature)': argumentJwt.split('.')[2]!,
    };

    const findings: Finding[] = [];
    // The calls topic: credentials everywhere except each message's own assertion field.
    for (const [i, m] of calls.entries()) {
      const raw = messageText(m);
      // Positive control: the scan does see the assertion and the arguments when they are there.
      if (i === 0) expect(raw.includes(assertions[0]!)).toBe(true);
      scan(`calls #${i}`, raw.split(assertions[i]!).join(''), credentials, findings);
    }
    expect(calls.some((m) => messageText(m).includes(argumentToken))).toBe(true);
    const counts: Record<string, number> = { calls: calls.length };
    for (const kind of ['results', 'audit', 'dlq'] as const) {
      const messages = await readTopic(kind);
      counts[kind] = messages.length;
      for (const [i, m] of messages.entries()) scan(`${kind} #${i}`, messageText(m), everything, findings);
    }
    const { rows: tables } = await stack.pool.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
      [runId],
    );
    let rows = 0;
    for (const { table_name } of tables) {
      const { rows: found } = await stack.pool.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM "${runId}"."${table_name}" t`,
      );
      rows += found.length;
      for (const r of found) scan(`postgres ${table_name}`, r.row, everything, findings);
    }
    for (const key of await stack.redis.keys(`${stack.keyPrefix}*`)) {
      const type = await stack.redis.type(key);
      const value =
        type === 'string'
          ? ((await stack.redis.get(key)) ?? '')
          : type === 'hash'
            ? JSON.stringify(await stack.redis.hgetall(key))
            : JSON.stringify(await stack.redis.dump(key));
      scan(`redis ${key}`, `${key}\n${value}`, everything, findings);
    }
    for (const [i, line] of logLines.entries()) scan(`log line #${i}`, line, everything, findings);
    for (const [i, line] of storyLines.entries()) scan(`story output #${i}`, line, everything, findings);

    expect(findings).toEqual([]);
    // The scan covered real traffic: every topic, the audit log and plenty of log lines.
    expect(counts.results).toBeGreaterThanOrEqual(calls.length);
    expect(counts.audit).toBeGreaterThanOrEqual(calls.length);
    expect(counts.dlq).toBeGreaterThanOrEqual(1);
    expect(tables.map((t) => t.table_name)).toContain('audit_records');
    expect(rows).toBeGreaterThan(counts.audit!);
    expect(logLines.length).toBeGreaterThan(20);
    const components = new Set(logLines.map((l) => (JSON.parse(l) as { component?: string }).component));
    for (const c of ['bus', 'executor', 'reconciler']) expect(components, c).toContain(c);
  }, 180_000);
});
