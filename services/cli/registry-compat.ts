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
 * now, under the subject's configured compatibility rule (POST
 * /compatibility/subjects/{subject}/versions/latest). Read-only: nothing is registered. Throws
 * UnreachableError when the registry cannot be reached, and an Error with the registry's answer for
 * any other refusal.
 */
export async function checkWithRegistry(
  baseUrl: string,
  subject: string,
  schema: AvroSchemaJson,
): Promise<RegistryVerdict> {
  const url = `${baseUrl}/compatibility/subjects/${encodeURIComponent(subject)}/versions/latest?verbose=true`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json', accept: 'application/json' },
      body: JSON.stringify({ schema: JSON.stringify(schema), schemaType: 'AVRO' }),
      signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    });
  } catch (err) {
    throw new UnreachableError(
      'schema-registry',
      `cannot reach the schema registry at ${baseUrl}: ${describe(err)}`,
      {
        cause: err,
      },
    );
  }
  const text = await response.text();
  const body = parse(text);
  if (response.status === 404) return { status: 'not-registered' };
  if (!response.ok) {
    throw new Error(`the schema registry answered ${response.status} for ${subject}: ${text.slice(0, 300)}`);
  }
  const answer = body as { is_compatible?: unknown; messages?: unknown } | undefined;
  if (typeof answer?.is_compatible !== 'boolean') {
    throw new Error(`the schema registry gave no verdict for ${subject}: ${text.slice(0, 300)}`);
  }
  if (answer.is_compatible) return { status: 'compatible' };
  const messages = Array.isArray(answer.messages) ? answer.messages.map(String) : [];
  return { status: 'incompatible', messages };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
