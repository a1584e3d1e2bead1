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

/** The tasks extension, as a request declares it in its client capabilities. */
export const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } } as const;

/**
 * One JSON-RPC request at 2026-07-28, written by hand: the `Mcp-Method` header and, when `name` is
 * given, `Mcp-Name` (`headers` may override or add any), and the `_meta` envelope with the client's
 * capabilities (`capabilities`, default form elicitation) merged with `meta`.
 */
export async function rawRequest(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  options: {
    readonly name?: string;
    readonly capabilities?: Record<string, unknown>;
    readonly meta?: Record<string, unknown>;
    readonly headers?: Record<string, string>;
  } = {},
): Promise<RawAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(options.name === undefined ? {} : { 'mcp-name': options.name }),
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'toolgate-raw-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? { elicitation: { form: {} } },
          ...options.meta,
        },
      },
    }),
  });
  const text = await response.text();
  const json = (text.startsWith('{') ? JSON.parse(text) : parseSse(text)) as Omit<RawAnswer, 'status'>;
  return { status: response.status, ...json };
}

/**
 * One `tools/call` at 2026-07-28 ({@link rawRequest}), so tests can send request states and input
 * responses no well-behaved client would.
 */
export function rawToolsCall(
  url: string,
  token: string,
  params: {
    readonly name: string;
    readonly arguments: Record<string, unknown>;
    readonly requestState?: string;
    readonly inputResponses?: Record<string, unknown>;
    readonly meta?: Record<string, unknown>;
    readonly capabilities?: Record<string, unknown>;
  },
): Promise<RawAnswer> {
  return rawRequest(
    url,
    token,
    'tools/call',
    {
      name: params.name,
      arguments: params.arguments,
      ...(params.requestState === undefined ? {} : { requestState: params.requestState }),
      ...(params.inputResponses === undefined ? {} : { inputResponses: params.inputResponses }),
    },
    {
      name: params.name,
      ...(params.meta === undefined ? {} : { meta: params.meta }),
      ...(params.capabilities === undefined ? {} : { capabilities: params.capabilities }),
    },
  );
}

/** `tasks/get` of `taskId`, declaring the tasks extension unless `capabilities` says otherwise. */
export function rawTasksGet(
  url: string,
  token: string,
  taskId: string,
  capabilities: Record<string, unknown> = WITH_TASKS,
): Promise<RawAnswer> {
  return rawRequest(url, token, 'tasks/get', { taskId }, { name: taskId, capabilities });
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
