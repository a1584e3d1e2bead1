import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ToolgateError } from '../../../libs/core/errors.js';
import {
  changedToolError,
  mcpToolDigest,
  toolReportedError,
  upstreamCallFailure,
} from '../../../libs/mcp-upstream/index.js';
import { payloadOf } from '../../../libs/mcp-upstream/import-tool.js';

const tool = {
  name: 'lookup',
  description: 'Look up an order.',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
};

describe('mcpToolDigest', () => {
  it('is a 64-hex SHA-256 that ignores key order and the fields that decide nothing', () => {
    const digest = mcpToolDigest(tool);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(
      mcpToolDigest({
        inputSchema: { required: ['id'], properties: { id: { type: 'string' } }, type: 'object' },
        description: 'Look up an order.',
        name: 'lookup',
        annotations: { readOnlyHint: true },
        title: 'Lookup',
      } as typeof tool),
    ).toBe(digest);
    expect(mcpToolDigest({ ...tool, outputSchema: undefined })).toBe(digest);
  });

  it.each([
    ['the name', { ...tool, name: 'lookup2' }],
    ['the description', { ...tool, description: 'Look up an order. Also cancels it.' }],
    ['the input schema', { ...tool, inputSchema: { ...tool.inputSchema, required: [] } }],
    ['the output schema', { ...tool, outputSchema: { type: 'object' } }],
  ])('changes with %s', (_what, changed) => {
    expect(mcpToolDigest(changed)).not.toBe(mcpToolDigest(tool));
  });
});

describe('upstreamCallFailure: what a failed tools/call means for the effect', () => {
  it.each([
    ['InvalidParams', new ProtocolError(ProtocolErrorCode.InvalidParams, 'bad'), 'CALLER_ERROR'],
    ['MethodNotFound', new ProtocolError(ProtocolErrorCode.MethodNotFound, 'no'), 'CALLER_ERROR'],
    ['InternalError (may have acted)', new ProtocolError(ProtocolErrorCode.InternalError, 'boom'), 'TIMEOUT'],
    ['a server-defined code', new ProtocolError(-32001, 'custom'), 'TIMEOUT'],
    ['RequestTimeout', new SdkError(SdkErrorCode.RequestTimeout, 'slow'), 'TIMEOUT'],
    ['ConnectionClosed', new SdkError(SdkErrorCode.ConnectionClosed, 'gone'), 'TIMEOUT'],
    ['NotConnected (never sent)', new SdkError(SdkErrorCode.NotConnected, 'no'), 'SERVER_ERROR'],
    ['input required', new SdkError(SdkErrorCode.UnsupportedResultType, 'input'), 'CALLER_ERROR'],
    ['an AbortError', Object.assign(new Error('aborted'), { name: 'AbortError' }), 'TIMEOUT'],
    ['ECONNREFUSED', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), 'SERVER_ERROR'],
  ])('%s → %s', (_what, err, code) => {
    const mapped = upstreamCallFailure(err);
    expect(mapped).toBeInstanceOf(ToolgateError);
    expect(mapped.code).toBe(code);
    // The upstream's own words stay in the cause, out of the model's message.
    expect(mapped.message).not.toMatch(/\b(bad|boom|custom|slow|gone|refused)\b/);
  });

  it('passes a ToolgateError through unchanged', () => {
    const refusal = changedToolError('x', 'changed');
    expect(upstreamCallFailure(refusal)).toBe(refusal);
    expect(refusal).toMatchObject({ code: 'POLICY_VIOLATION', retryable: false });
  });
});

describe('payloadOf: the answer as the model will see it', () => {
  it('keeps text items and names what it left out', () => {
    expect(
      payloadOf(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
            { type: 'text', text: 'b' },
          ],
        },
        false,
      ),
    ).toEqual({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
      omittedContentTypes: ['image'],
    });
  });

  it('takes structuredContent when the tool declares an output schema', () => {
    expect(payloadOf({ content: [], structuredContent: { total: 3 } }, true)).toEqual({ total: 3 });
  });

  it('throws the tool-reported error for isError, bounded in length', () => {
    const long = 'x'.repeat(5_000);
    let thrown: unknown;
    try {
      payloadOf({ content: [{ type: 'text', text: long }], isError: true }, false);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ToolgateError);
    expect((thrown as ToolgateError).code).toBe('CALLER_ERROR');
    expect((thrown as ToolgateError).message.length).toBeLessThan(2_100);
    expect(toolReportedError('').message).toMatch(/without a message/);
  });
});
