/** The JSON-RPC answer of one raw 2026-07-28 request. */
export interface RawAnswer {
  readonly status: number;
  readonly result?: Record<string, unknown> & {
    readonly resultType?: string;
    readonly requestState?: string;
    readonly inputRequests?: Record<string, unknown>;
    readonly isError?: boolean;
    readonly content?: { readonly text?: string }[];
    readonly _meta?: Record<string, unknown>;
  };
  readonly error?: { readonly code: number; readonly message: string };
}

let nextId = 1;

/**
 * One `tools/call` at 2026-07-28, written by hand (headers and `_meta` envelope as the revision
 * wants them), so tests can send request states and input responses no well-behaved client would.
 */
export async function rawToolsCall(
  url: string,
  token: string,
  params: {
    readonly name: string;
    readonly arguments: Record<string, unknown>;
    readonly requestState?: string;
    readonly inputResponses?: Record<string, unknown>;
    readonly meta?: Record<string, unknown>;
  },
): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': params.name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: {
        name: params.name,
        arguments: params.arguments,
        ...(params.requestState === undefined ? {} : { requestState: params.requestState }),
        ...(params.inputResponses === undefined ? {} : { inputResponses: params.inputResponses }),
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'toolgate-raw-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          ...params.meta,
        },
      },
    }),
  });
  const text = await response.text();
  const json = (text.startsWith('{') ? JSON.parse(text) : parseSse(text)) as Omit<RawAnswer, 'status'>;
  return { status: response.status, ...json };
}

/** The last `data:` message of an SSE body. */
function parseSse(text: string): unknown {
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim());
  return JSON.parse(data.at(-1) ?? '{}');
}

/** The accepted answer to the gateway's confirmation question. */
export const CONFIRMED = { confirm: { action: 'accept', content: { confirm: true } } } as const;
