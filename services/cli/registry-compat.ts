import { backwardProblems } from '../../libs/events/schema-compat.js';
import type { AvroSchemaJson } from '../../libs/events/schema-files.js';
import { FailureError, UnreachableError } from './cli-error.js';
import { describe } from './classify-error.js';
import { redactUrl } from './config.js';
import { CONNECT_TIMEOUT_MS } from './resources.js';

/** What the registry says about a schema for a subject. */
export type RegistryVerdict =
  | { readonly status: 'compatible'; readonly latestVersion: number | undefined }
  | {
      readonly status: 'incompatible';
      readonly latestVersion: number | undefined;
      /**
       * Why, never empty: the registry's own messages when it gives any (Confluent does with
       * `verbose=true`), else the BACKWARD problems of the schema against the latest registered
       * version found by Avro schema resolution, else a line saying the registry gave no reason.
       */
      readonly messages: readonly string[];
    }
  /** The subject has no version yet: the first registration will accept any schema. */
  | { readonly status: 'not-registered' };

/**
 * Confluent error codes for "no such subject" and "no such version". A 404 without one of them
 * means the URL is not the registry's Confluent-compatible API (e.g. Apicurio's root instead of
 * `/apis/ccompat/v7`), which must not pass for "nothing registered".
 */
const NOT_FOUND_CODES = new Set([40401, 40402]);

/**
 * Asks a Confluent-compatible schema registry whether `schema` could be registered under `subject`
 * now, under the subject's configured compatibility rule (GET the subject's latest version, then
 * POST /compatibility/subjects/{subject}/versions/latest). Read-only: nothing is registered. Throws
 * UnreachableError when the registry cannot be reached, a FailureError when the URL answers 404
 * without the registry's "subject not found" code (not the compatible API), and an Error with the
 * registry's answer for any other refusal.
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
  if (isNotFound(latest)) return { status: 'not-registered' };
  if (!latest.ok) throw refused(baseUrl, subject, latest);
  const registered = registeredVersion(latest.text);
  const answer = await call(baseUrl, `/compatibility${path}/versions/latest?verbose=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema), schemaType: 'AVRO' }),
  });
  if (isNotFound(answer)) return { status: 'not-registered' };
  if (!answer.ok) throw refused(baseUrl, subject, answer);
  const verdict = parse(answer.text) as { is_compatible?: unknown; messages?: unknown } | undefined;
  if (typeof verdict?.is_compatible !== 'boolean') {
    throw new Error(`the schema registry gave no verdict for ${subject}: ${answer.text.slice(0, 300)}`);
  }
  if (verdict.is_compatible) return { status: 'compatible', latestVersion: registered.version };
  const given = Array.isArray(verdict.messages) ? verdict.messages.map(String) : [];
  return {
    status: 'incompatible',
    latestVersion: registered.version,
    messages: given.length > 0 ? given : explain(registered, schema),
  };
}

interface Answer {
  readonly ok: boolean;
  readonly status: number;
  readonly text: string;
}

/** The latest registered version as the registry returned it; `schema` only when it is Avro. */
interface Registered {
  readonly version: number | undefined;
  readonly schema: AvroSchemaJson | undefined;
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
      `cannot reach the schema registry at ${redactUrl(baseUrl)}: ${describe(err)}`,
      {
        cause: err,
      },
    );
  }
}

function isNotFound(answer: Answer): boolean {
  if (answer.status !== 404) return false;
  const body = parse(answer.text) as { error_code?: unknown } | undefined;
  return typeof body?.error_code === 'number' && NOT_FOUND_CODES.has(body.error_code);
}

function registeredVersion(text: string): Registered {
  const body = parse(text) as { version?: unknown; schema?: unknown; schemaType?: unknown } | undefined;
  const version = typeof body?.version === 'number' ? body.version : undefined;
  const avro = body?.schemaType === undefined || body.schemaType === 'AVRO';
  const schema = avro && typeof body?.schema === 'string' ? parse(body.schema) : undefined;
  return {
    version,
    schema: schema !== null && typeof schema === 'object' ? (schema as AvroSchemaJson) : undefined,
  };
}

/** The reason for a refusal the registry did not explain, found locally against the latest version. */
function explain(registered: Registered, schema: AvroSchemaJson): string[] {
  const against = `version ${registered.version ?? 'latest'}`;
  const problems = registered.schema === undefined ? [] : backwardProblems(registered.schema, schema);
  if (problems.length > 0) return problems.map((p) => `against ${against}: ${p}`);
  return [`refused against ${against} under the subject's compatibility rule (the registry gave no reason).`];
}

function refused(baseUrl: string, subject: string, answer: Answer): Error {
  if (answer.status === 404) {
    return new FailureError(
      `the schema registry at ${redactUrl(baseUrl)} answered 404 for ${subject} without a "subject not found" code: ${answer.text.slice(0, 120)}`,
      'Give the Confluent-compatible API base URL (for Apicurio: http://host:port/apis/ccompat/v7).',
    );
  }
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
