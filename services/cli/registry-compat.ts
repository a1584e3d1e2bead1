import type { AvroSchemaJson } from '../../libs/events/schema-files.js';
import { UnreachableError } from './cli-error.js';
import { describe } from './classify-error.js';
import { CONNECT_TIMEOUT_MS } from './resources.js';

/** What the registry says about a schema for a subject. */
export type RegistryVerdict =
  | { readonly status: 'compatible' }
  | { readonly status: 'incompatible'; readonly messages: readonly string[] }
  /** The subject has no version yet: the first registration will accept any schema. */
  | { readonly status: 'not-registered' };

/**
 * Asks a Confluent-compatible schema registry whether `schema` could be registered under `subject`
 * now, under the subject's configured compatibility rule (GET the subject's latest version, then
 * POST /compatibility/subjects/{subject}/versions/latest). Read-only: nothing is registered. Throws
 * UnreachableError when the registry cannot be reached, and an Error with the registry's answer for
 * any other refusal.
 */
export async function checkWithRegistry(
  baseUrl: string,
  subject: string,
  schema: AvroSchemaJson,
): Promise<RegistryVerdict> {
  const path = `/subjects/${encodeURIComponent(subject)}`;
  // Asked first and separately: some registries (Apicurio) call any schema "compatible" with a
  // subject that has no version, where Confluent answers 404.
  const latest = await call(baseUrl, `${path}/versions/latest`, { method: 'GET' });
  if (latest.status === 404) return { status: 'not-registered' };
  if (!latest.ok) throw refused(subject, latest);
  const answer = await call(baseUrl, `/compatibility${path}/versions/latest?verbose=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema), schemaType: 'AVRO' }),
  });
  if (answer.status === 404) return { status: 'not-registered' };
  if (!answer.ok) throw refused(subject, answer);
  const verdict = parse(answer.text) as { is_compatible?: unknown; messages?: unknown } | undefined;
  if (typeof verdict?.is_compatible !== 'boolean') {
    throw new Error(`the schema registry gave no verdict for ${subject}: ${answer.text.slice(0, 300)}`);
  }
  if (verdict.is_compatible) return { status: 'compatible' };
  const messages = Array.isArray(verdict.messages) ? verdict.messages.map(String) : [];
  return { status: 'incompatible', messages };
}

interface Answer {
  readonly ok: boolean;
  readonly status: number;
  readonly text: string;
}

async function call(baseUrl: string, path: string, init: RequestInit): Promise<Answer> {
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) },
      signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    });
    return { ok: response.ok, status: response.status, text: await response.text() };
  } catch (err) {
    throw new UnreachableError(
      'schema-registry',
      `cannot reach the schema registry at ${baseUrl}: ${describe(err)}`,
      {
        cause: err,
      },
    );
  }
}

function refused(subject: string, answer: Answer): Error {
  return new Error(
    `the schema registry answered ${answer.status} for ${subject}: ${answer.text.slice(0, 300)}`,
  );
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
