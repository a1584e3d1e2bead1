import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ToolCallResult } from '../../../libs/core/types.js';
import { checkCall, type ObservedCall } from '../../../libs/testing/call-checks.js';
import { parseFixture } from '../../../libs/testing/load-fixture.js';
import { MockLLMClient } from '../../../libs/testing/mock-llm-client.js';
import { forbidOutboundNetwork } from '../../../libs/testing/no-network.js';

const refund = (
  outcome: ToolCallResult['outcome'],
  key: string,
  extra: Partial<ToolCallResult> = {},
): ObservedCall => ({
  providerCallId: 'call_1',
  tool: 'issue_refund',
  idempotencyKey: key,
  result: {
    callId: 'call_1',
    tool: 'issue_refund',
    outcome,
    idempotencyKey: key,
    toolInvocations: 1,
    ...extra,
  },
});

describe('parseFixture', () => {
  it('names every problem with its path', () => {
    const bad = {
      name: 'Bad Name',
      description: 'x',
      source: 'hand-written',
      principal: { id: 'mallory', tenant: 't1' },
      rounds: [
        { step: 1, provider: 'openai', response: {}, expect: { calls: { call_1: { outcome: 'OK' } } } },
      ],
    };
    expect(() => parseFixture(bad, 'bad.json')).toThrow(/bad\.json: not a valid agent fixture/);
    try {
      parseFixture(bad, 'bad.json');
    } catch (err) {
      const text = (err as Error).message;
      expect(text).toContain('name:');
      expect(text).toContain('principal:');
      expect(text).toContain('rounds.0.expect.calls.call_1.outcome:');
    }
  });

  it('refuses unknown keys, so a misspelt expectation cannot silently assert nothing', () => {
    const fixture = {
      name: 'typo',
      description: 'x',
      source: 'hand-written',
      principal: 'ana',
      rounds: [
        {
          step: 1,
          provider: 'openai',
          response: {},
          expect: { calls: { c: { outcome: 'SUCCESS', toolInvocation: 1 } } },
        },
      ],
    };
    expect(() => parseFixture(fixture)).toThrow(/toolInvocation/);
  });
});

describe('checkCall', () => {
  const none = () => undefined;

  it('passes a call that matches', () => {
    const call = refund('SUCCESS', 'tg1:a', { payload: { amount: 10 } });
    expect(
      checkCall(1, call, { outcome: 'SUCCESS', toolInvocations: 1, payloadIncludes: { amount: 10 } }, none),
    ).toEqual([]);
  });

  it('says the key was unchanged when a repeat was not deduplicated for another reason', () => {
    const original = refund('SUCCESS', 'tg1:a');
    const repeat = refund('SUCCESS', 'tg1:a');
    const failures = checkCall(
      2,
      repeat,
      { outcome: 'DUPLICATE', sameKeyAs: { round: 1, call: 'call_1' } },
      () => original,
    );
    expect(failures).toEqual([
      'round 2, call call_1 (issue_refund): expected outcome DUPLICATE, got SUCCESS — the idempotency key was unchanged (tg1:a) yet the repeat was not answered from the idempotency store',
    ]);
  });

  it('reports message, code and payload mismatches separately', () => {
    const call = refund('SCHEMA_INVALID', 'tg1:a', {
      toolInvocations: 0,
      error: { code: 'SCHEMA_INVALID', message: 'order_id: invalid', retryable: true },
    });
    const failures = checkCall(
      1,
      call,
      {
        outcome: 'SCHEMA_INVALID',
        errorCode: 'UNAUTHORIZED',
        messageIncludes: ['amount'],
        samePayloadAs: { round: 1, call: 'x' },
      },
      none,
    );
    expect(failures).toEqual([
      'round 1, call call_1 (issue_refund): expected error code UNAUTHORIZED, got SCHEMA_INVALID',
      'round 1, call call_1 (issue_refund): expected the model-visible message to mention "amount", got "order_id: invalid"',
      'round 1, call call_1 (issue_refund): samePayloadAs names round 1, call x, which the script never made',
    ]);
  });
});

describe('MockLLMClient', () => {
  it('serves each response once, in order, and refuses to improvise', () => {
    const model = new MockLLMClient([
      { provider: 'openai', response: { role: 'assistant', content: 'a' } },
      { provider: 'anthropic', response: { content: [] } },
    ]);
    expect(model.nextTurn().provider).toBe('openai');
    expect(model.nextTurn().provider).toBe('anthropic');
    expect(model.turnsServed).toBe(2);
    expect(() => model.nextTurn()).toThrow('the model script has 2 round(s); round 3 was asked for');
  });
});

describe('forbidOutboundNetwork', () => {
  it('refuses a non-loopback connection and records it, then restores', () => {
    const guard = forbidOutboundNetwork();
    try {
      expect(() => net.connect({ host: '203.0.113.7', port: 443 })).toThrow(
        'outbound network refused in this test run: 203.0.113.7:443',
      );
      expect(guard.refused).toEqual([{ host: '203.0.113.7', port: 443 }]);
    } finally {
      guard.restore();
    }
    expect(net.Socket.prototype.connect.name).not.toBe('patched');
  });

  it('lets loopback through', async () => {
    const guard = forbidOutboundNetwork();
    const server = net.createServer((s) => s.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect({ host: '127.0.0.1', port }, () => {
          socket.end();
          resolve();
        });
        socket.on('error', reject);
      });
      expect(guard.refused).toEqual([]);
    } finally {
      guard.restore();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
