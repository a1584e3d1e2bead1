import { describe, expect, it } from 'vitest';
import { classify } from '../../../libs/core/classify.js';
import { ToolgateError } from '../../../libs/core/errors.js';
import { toResultError } from '../../../libs/core/result-error.js';
import { callerError, outcomeUnknown, serverError } from '../../../libs/core/tool-failure.js';
import { mayHaveApplied } from '../../../libs/guards/run-attempt.js';
import { defineTool } from '../../../libs/registry/define-tool.js';
import type { ToolDefinition } from '../../../libs/registry/tool-definition.js';
import { z } from 'zod';

const closeTicket = defineTool({
  name: 'close_ticket',
  version: '1.0.0',
  description: 'Close one support ticket.',
  input: z.object({ ticket: z.string() }),
  output: z.object({ ticket: z.string() }),
  scopes: [],
  owner: 'support',
  execute: async (args) => args,
}) as unknown as ToolDefinition;

/** What the execute stage concludes for an invoked state-changing tool that threw `error`. */
const unknownAfter = (error: unknown): boolean =>
  mayHaveApplied(closeTicket, { ok: false, error: classify(error), invoked: true });

describe('tool failure errors', () => {
  it('callerError: CALLER_ERROR, EXECUTION_ERROR, retryable by the model, with the fix and the cause', () => {
    const cause = new Error('404 from the ticket service');
    const error = callerError('There is no ticket T-9.', { suggestedFix: 'Use lookup_ticket.', cause });
    expect(error).toBeInstanceOf(ToolgateError);
    expect(error).toMatchObject({
      code: 'CALLER_ERROR',
      outcome: 'EXECUTION_ERROR',
      message: 'There is no ticket T-9.',
      retryable: true,
      suggestedFix: 'Use lookup_ticket.',
      cause,
    });
    expect(callerError('Closed already.', { retryable: false }).retryable).toBe(false);
  });

  it('serverError: SERVER_ERROR, retryable unless told otherwise, never a suggested fix', () => {
    expect(serverError('The ticket service is down.')).toMatchObject({
      code: 'SERVER_ERROR',
      outcome: 'EXECUTION_ERROR',
      retryable: true,
      suggestedFix: undefined,
    });
    expect(serverError('The ticket service is down.', { retryable: false }).retryable).toBe(false);
  });

  it('outcomeUnknown: TIMEOUT, the code of every unknown outcome', () => {
    expect(outcomeUnknown('The answer was lost.')).toMatchObject({
      code: 'TIMEOUT',
      outcome: 'EXECUTION_ERROR',
      message: 'The answer was lost.',
      retryable: true,
    });
  });

  it('classify keeps each tool-failure error as it is (same instance)', () => {
    for (const error of [callerError('a'), serverError('b'), outcomeUnknown('c')]) {
      expect(classify(error)).toBe(error);
    }
  });

  it('only outcomeUnknown and a plain Error leave a state-changing effect unknown', () => {
    expect(unknownAfter(callerError('a'))).toBe(false);
    expect(unknownAfter(serverError('b'))).toBe(false);
    expect(unknownAfter(serverError('b', { retryable: false }))).toBe(false);
    expect(unknownAfter(outcomeUnknown('c'))).toBe(true);
    expect(unknownAfter(new Error('ticket not found'))).toBe(true);
    expect(classify(new Error('ticket not found')).code).toBe('INTERNAL');
  });

  it('an empty or blank message becomes a generic sentence, never an empty one', () => {
    expect(callerError('').message).toBe('The service rejected the request as invalid; nothing was changed.');
    expect(serverError('  ').message).toBe('The service failed; nothing was changed.');
    expect(outcomeUnknown('').message).toMatch(/outcome is unknown/);
  });

  it('the result the model sees carries the message and fix, never the cause', () => {
    const error = callerError('There is no ticket T-9.', {
      suggestedFix: 'Use lookup_ticket.',
      cause: new Error('password=hunter2'),
    });
    const shown = toResultError(error);
    expect(shown).toEqual({
      code: 'CALLER_ERROR',
      message: 'There is no ticket T-9.',
      retryable: true,
      suggestedFix: 'Use lookup_ticket.',
    });
    expect(JSON.stringify(shown)).not.toContain('hunter2');
  });

  it('is exported from the package root', async () => {
    const root = await import('../../../libs/index.js');
    expect(root.callerError).toBe(callerError);
    expect(root.serverError).toBe(serverError);
    expect(root.outcomeUnknown).toBe(outcomeUnknown);
  });
});
