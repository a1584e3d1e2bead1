import avro from 'avsc';
import { SchemaRegistry, SchemaType, COMPATIBILITY } from '@kafkajs/confluent-schema-registry';
import { createRequire } from 'node:module';
import { ToolgateError } from '../core/errors.js';
import type { EventCodec } from './event-codec.js';
import { EVENT_KINDS, type EventKind, type EventKinds } from './contracts.js';
import { DEFAULT_MAX_EVENT_BYTES } from './size-limits.js';
import { loadSchemas, type AvroSchemaJson } from './schema-files.js';
import { valueSubject, type TopicNames } from './topics.js';
import { decodeWithinLimit, malformed, unframe } from './wire-format.js';

export interface RegistryCodecOptions {
  /** Confluent-compatible base URL, e.g. http://127.0.0.1:18081/apis/ccompat/v7 */
  readonly url: string;
  readonly topics: TopicNames;
  readonly maxBytes?: number;
  readonly schemas?: Readonly<Record<EventKind, AvroSchemaJson>>;
  /**
   * How long one registry request may take before it is abandoned and retried (three retries,
   * with backoff). Default 5,000 ms. Without it, a registry that accepts a connection and never
   * answers holds start-up, and every decode of a not-yet-cached schema id, forever.
   */
  readonly requestTimeoutMs?: number;
}

type RegistryMiddleware = NonNullable<ConstructorParameters<typeof SchemaRegistry>[0]['middlewares']>[number];

// The registry client is CommonJS and runs mappersmith's CommonJS build; its timeout middleware
// is taken from that same build (mappersmith's ESM types do not fit the client's CJS ones).
const requireCjs = createRequire(import.meta.url);
const { TimeoutMiddleware } = requireCjs('mappersmith/middleware/timeout') as {
  TimeoutMiddleware: (timeoutMs: number) => RegistryMiddleware;
};
const { isTimeoutError } = requireCjs('mappersmith/gateway/timeout-error') as {
  isTimeoutError: (error: unknown) => boolean;
};

/** Default for `RegistryCodecOptions.requestTimeoutMs`. */
export const DEFAULT_REGISTRY_REQUEST_TIMEOUT_MS = 5_000;

/**
 * A request whose connection was closed under it before an answer came (`socket hang up`,
 * ECONNRESET, EPIPE): a registry under load, or restarting, drops a connection now and then. A
 * registry that refuses connections (down) is not retried here: the callers' own retries pace that.
 */
function isDroppedConnection(error: unknown): boolean {
  const code = (error as { readonly code?: unknown } | null | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * The production codec: schemas registered in a Confluent-compatible registry (subject
 * `<topic>-value`, BACKWARD compatibility), events framed with registry ids. Decoding resolves the
 * writer's schema (fetched by id, cached) into this build's reader schema, so older producers stay
 * readable. A schema id the registry does not know is a malformed event; a registry that cannot be
 * reached is DEPENDENCY_UNAVAILABLE (retry later) — never confused with poison.
 */
export class RegistryEventCodec implements EventCodec {
  private readonly registry: SchemaRegistry;
  private readonly readers: Record<EventKind, avro.Type>;
  private readonly writerIds = new Map<EventKind, number>();
  private readonly resolvers = new Map<string, avro.Resolver | null>();
  private readonly maxBytes: number;

  private constructor(private readonly options: RegistryCodecOptions) {
    this.registry = new SchemaRegistry({
      host: options.url,
      clientId: 'toolgate',
      middlewares: [TimeoutMiddleware(options.requestTimeoutMs ?? DEFAULT_REGISTRY_REQUEST_TIMEOUT_MS)],
      // The client's own rules retry GET requests only, and of those only 5xx answers. Here every
      // request is retried — registration is idempotent (an identical schema keeps its id) and the
      // rest are reads — on a 5xx answer, a timeout, or a connection the registry dropped before
      // answering (a POST that met "socket hang up" used to fail a service's start or a CLI command
      // at once).
      retry: {
        enableRetry: () => true,
        validateRetry: (response) =>
          response.status() >= 500 ||
          isTimeoutError(response.error()) ||
          isDroppedConnection(response.error()),
      },
    });
    const schemas = options.schemas ?? loadSchemas();
    this.readers = Object.fromEntries(
      EVENT_KINDS.map((k) => [k, avro.Type.forSchema(schemas[k] as avro.Schema)]),
    ) as Record<EventKind, avro.Type>;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_EVENT_BYTES;
  }

  /**
   * Registers this build's four schemas (idempotent: an identical schema keeps its id) and returns a
   * ready codec. Fails when the registry refuses a schema as incompatible with the subject's history.
   */
  static async create(options: RegistryCodecOptions): Promise<RegistryEventCodec> {
    const codec = new RegistryEventCodec(options);
    const schemas = options.schemas ?? loadSchemas();
    for (const kind of EVENT_KINDS) {
      const { id } = await codec.registry.register(
        { type: SchemaType.AVRO, schema: JSON.stringify(schemas[kind]) },
        { subject: valueSubject(options.topics[kind]), compatibility: COMPATIBILITY.BACKWARD },
      );
      codec.writerIds.set(kind, id);
    }
    return codec;
  }

  /** The registry id this codec writes `kind` events with. */
  schemaId(kind: EventKind): number {
    return this.writerIds.get(kind)!;
  }

  async encode<K extends EventKind>(kind: K, value: EventKinds[K]): Promise<Buffer> {
    return this.registry.encode(this.writerIds.get(kind)!, value);
  }

  /** Refuses a message above `maxBytes` with an `OversizedEventError` (the event read anyway). */
  decode<K extends EventKind>(kind: K, bytes: Buffer): Promise<EventKinds[K]> {
    return decodeWithinLimit(bytes, this.maxBytes, () => this.decodeAnySize(kind, bytes));
  }

  private async decodeAnySize<K extends EventKind>(kind: K, bytes: Buffer): Promise<EventKinds[K]> {
    const { schemaId, body } = unframe(bytes, Number.POSITIVE_INFINITY);
    const resolver = await this.resolverFor(kind, schemaId);
    try {
      const reader = this.readers[kind];
      return (
        resolver === null ? reader.fromBuffer(body) : reader.fromBuffer(body, resolver)
      ) as EventKinds[K];
    } catch (err) {
      throw malformed(`undecodable ${kind} payload (schema id ${schemaId})`, err);
    }
  }

  private async resolverFor(kind: EventKind, schemaId: number): Promise<avro.Resolver | null> {
    const cacheKey = `${kind}:${schemaId}`;
    if (this.resolvers.has(cacheKey)) return this.resolvers.get(cacheKey)!;
    let writer: avro.Type;
    try {
      writer = (await this.registry.getSchema(schemaId)) as unknown as avro.Type;
    } catch (err) {
      if (isNotFound(err)) throw malformed(`unknown schema id ${schemaId}`, err);
      throw new ToolgateError('DEPENDENCY_UNAVAILABLE', 'schema registry unavailable', { cause: err });
    }
    const reader = this.readers[kind];
    if (writer.name !== reader.name) {
      throw malformed(
        `schema id ${schemaId} is ${writer.name ?? 'unnamed'}, expected ${reader.name ?? kind}`,
      );
    }
    let resolver: avro.Resolver | null;
    try {
      resolver = writer.equals(reader) ? null : reader.createResolver(writer);
    } catch (err) {
      throw malformed(`schema id ${schemaId} cannot be read as ${kind}`, err);
    }
    this.resolvers.set(cacheKey, resolver);
    return resolver;
  }
}

function isNotFound(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { status?: unknown; originalError?: { status?: unknown } };
  return e.status === 404 || e.originalError?.status === 404;
}
