import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { offlineTestFile } from '../../helpers/offline.js';
import { openAICompletion } from '../../helpers/tool-calls.js';
import type { Principal } from '../../../libs/core/types.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { HarnessWorld } from '../../../libs/testing/fixture-harness.js';
import {
  createAgentHarness,
  type AgentHarness,
  type AgentHarnessOptions,
} from '../../../services/embedded/agent-harness.js';
import type { AgentFixture } from '../../../libs/testing/fixture-schema.js';
import { parseFixture } from '../../../libs/testing/load-fixture.js';
import { runFixture } from '../../../libs/testing/run-fixture.js';

/**
 * The test kit on a tool of the test's own, with no store anywhere: a ticket service, the tool
 * that closes tickets through it, and a world that reads the service's request count and ticket
 * status. The tool's `execute` records every call it gets, so a refusal is proven by what it never
 * received.
 */
function ticketDesk() {
  const statuses = new Map([
    ['T-1', 'open'],
    ['T-2', 'open'],
  ]);
  const ticketService = {
    closeRequests: 0,
    close(id: string): { id: string; status: string } {
      ticketService.closeRequests += 1;
      statuses.set(id, 'closed');
      return { id, status: 'closed' };
    },
    statusOf: (id: string): string | undefined => statuses.get(id),
  };
  const received: unknown[] = [];
  const closeTicket = defineTool({
    name: 'close_ticket',
    version: '1.0.0',
    description: 'Close one support ticket by its id, e.g. T-1. Closing twice changes nothing.',
    input: z.object({ ticket_id: z.string().regex(/^T-\d+$/, 'a ticket id looks like T-1') }),
    output: z.object({ id: z.string(), status: z.string() }),
    scopes: ['tickets:write'],
    owner: 'support-tools',
    execute: async (args) => {
      received.push(args);
      return ticketService.close(args.ticket_id);
    },
  });
  const world: HarnessWorld = {
    requestCounts: () => ({ 'tickets.close': ticketService.closeRequests }),
    facts: { ticketStatus: (id) => ticketService.statusOf(id) },
  };
  return { closeTicket, ticketService, received, world };
}

const ann: Principal = {
  id: 'u-ann',
  tenant: 't1',
  kind: 'user',
  roles: [],
  scopes: ['tickets:write'],
};

/** An OpenAI chat completion calling close_ticket with `args`. */
function closing(callId: string, args: string): Record<string, unknown> {
  return openAICompletion([{ id: callId, name: 'close_ticket', arguments: args }]);
}

/**
 * Written inline as a user would write it: a malformed id refused by the schema, the corrected
 * call, then the same turn re-run after a crash, answered from the first result.
 */
const closeFixture: AgentFixture = parseFixture(
  {
    name: 'close-ticket',
    description: 'Ann asks to close her ticket; the model first mangles the id, then gets it right.',
    source: 'hand-written in OpenAI Chat Completions shape',
    principal: 'ann',
    rounds: [
      {
        note: 'the id is not a ticket id: refused before the tool runs',
        step: 1,
        provider: 'openai',
        response: closing('call_bad', '{"ticket_id":"ticket one"}'),
        expect: {
          calls: {
            call_bad: {
              outcome: 'SCHEMA_INVALID',
              messageIncludes: ['ticket_id', 'a ticket id looks like T-1'],
              toolInvocations: 0,
            },
          },
          downstreamRequests: { tickets: 0 },
        },
      },
      {
        step: 2,
        provider: 'openai',
        response: closing('call_close', '{"ticket_id":"T-1"}'),
        expect: {
          calls: {
            call_close: { outcome: 'SUCCESS', toolInvocations: 1, payloadIncludes: { status: 'closed' } },
          },
          downstreamRequests: { 'tickets.close': 1 },
        },
      },
      {
        note: 'the same turn re-run after a crash',
        step: 2,
        provider: 'openai',
        response: closing('call_close', '{"ticket_id":"T-1"}'),
        expect: {
          calls: {
            call_close: {
              outcome: 'DUPLICATE',
              toolInvocations: 0,
              samePayloadAs: { round: 2, call: 'call_close' },
              sameKeyAs: { round: 2, call: 'call_close' },
            },
          },
          downstreamRequests: { 'tickets.close': 0 },
        },
      },
    ],
    after: { ticketStatus: { 'T-1': 'closed', 'T-2': 'open' } },
  },
  'close-ticket (inline)',
);

const guard = offlineTestFile();

type TicketDesk = ReturnType<typeof ticketDesk>;

/** The harness most tests use: the desk's tool, ann by name, and the desk's world. */
const deskOptions = (desk: TicketDesk): AgentHarnessOptions => ({
  tools: [desk.closeTicket],
  principals: { ann },
  world: desk.world,
});

/**
 * Builds a fresh ticket desk and an agent harness on it (`options` picks what the harness is given),
 * runs `body`, and stops the harness whatever happens.
 */
async function onDesk(
  options: (desk: TicketDesk) => AgentHarnessOptions,
  body: (harness: AgentHarness, desk: TicketDesk) => Promise<void>,
): Promise<void> {
  const desk = ticketDesk();
  const harness = await createAgentHarness(options(desk));
  try {
    await body(harness, desk);
  } finally {
    await harness.stop();
  }
}

describe('createAgentHarness on your own tools', () => {
  it('replays an inline fixture; the call the schema refused never reached the tool', async () => {
    await onDesk(deskOptions, async (harness, desk) => {
      const run = await runFixture(closeFixture, harness);
      expect(run.failures).toEqual([]);
      expect(run.rounds.map((r) => r.calls[0]!.result.outcome)).toEqual([
        'SCHEMA_INVALID',
        'SUCCESS',
        'DUPLICATE',
      ]);
      expect(run.rounds.map((r) => r.downstreamRequests)).toEqual([
        { 'tickets.close': 0 },
        { 'tickets.close': 1 },
        { 'tickets.close': 0 },
      ]);
      // Counted by the tool itself: only the corrected call ran it, once.
      expect(desk.received).toEqual([{ ticket_id: 'T-1' }]);
      expect(desk.ticketService.closeRequests).toBe(1);
    });
  });

  it('reports a fact that differs from the script, naming fact, subject and both values', async () => {
    await onDesk(deskOptions, async (harness) => {
      const run = await runFixture(
        { ...closeFixture, name: 'close-ticket-wrong-after', after: { ticketStatus: { 'T-1': 'open' } } },
        harness,
      );
      expect(run.failures).toEqual([
        'after the last round: expected ticketStatus of T-1 to be "open", found "closed"',
      ]);
    });
  });

  it('without a world, every request count and fact the fixture expects is a failure line, not a pass', async () => {
    await onDesk(
      (desk) => ({ tools: [desk.closeTicket], principals: { ann } }),
      async (harness, desk) => {
        const run = await runFixture(closeFixture, harness);
        expect(run.failures).toEqual([
          'round 1: the script counts requests to tickets, but the harness has no world.requestCounts to count them',
          'round 2: the script counts requests to tickets.close, but the harness has no world.requestCounts to count them',
          'round 3: the script counts requests to tickets.close, but the harness has no world.requestCounts to count them',
          'after the last round: the script checks ticketStatus, but the harness has no world.facts to read it from',
        ]);
        // The calls themselves were still run and checked.
        expect(run.rounds.map((r) => r.calls[0]!.result.outcome)).toEqual([
          'SCHEMA_INVALID',
          'SUCCESS',
          'DUPLICATE',
        ]);
        expect(run.rounds[0]!.downstreamRequests).toEqual({});
        expect(desk.received).toEqual([{ ticket_id: 'T-1' }]);
      },
    );
  });

  it('an unknown principal name rejects before any turn, listing the names the harness knows', async () => {
    await onDesk(deskOptions, async (harness, desk) => {
      await expect(runFixture({ ...closeFixture, principal: 'bob' }, harness)).rejects.toThrow(
        'fixture close-ticket names principal "bob", which this harness was not given (its principals: ann); pass it in createAgentHarness({ principals }) or write the principal out in full',
      );
      // Names are own properties only: an inherited name is no principal either.
      await expect(runFixture({ ...closeFixture, principal: 'toString' }, harness)).rejects.toThrow(
        'names principal "toString", which this harness was not given',
      );
      expect(desk.received).toEqual([]);
    });
  });

  it('a principal written out in full needs no names; a name then says the harness has none', async () => {
    await onDesk(
      (desk) => ({ tools: [desk.closeTicket], world: desk.world }),
      async (harness, desk) => {
        const run = await runFixture({ ...closeFixture, principal: ann }, harness);
        expect(run.failures).toEqual([]);
        expect(desk.received).toEqual([{ ticket_id: 'T-1' }]);
        await expect(runFixture(closeFixture, harness)).rejects.toThrow(
          'names principal "ann", which this harness was not given (it has no named principals)',
        );
      },
    );
  });

  it('made no outbound connection', () => {
    expect(guard().refused).toEqual([]);
  });
});

describe('libs/testing stands alone', () => {
  const dir = join(import.meta.dirname, '../../../libs/testing');
  const specifiers = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(join(dir, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => ({
        file,
        specifier: m[1]!,
      })),
    );

  it('imports no service, so nothing of the store demo, its catalog or its fake services either', () => {
    // The scan sees real imports (so an empty result below is not a scan that matched nothing).
    expect(specifiers).toContainEqual({ file: 'run-fixture.ts', specifier: './fixture-harness.js' });
    expect(specifiers).toContainEqual({ file: 'fixture-harness.ts', specifier: '../core/types.js' });
    const services = specifiers.filter(({ specifier }) => /(^|\/)services\//.test(specifier));
    expect(services).toEqual([]);
  });
});
