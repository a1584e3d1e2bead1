import { pino, type DestinationStream, type LevelWithSilent, type Logger } from 'pino';
import { redactArguments, REDACTED } from '../pipeline/build-audit-record.js';
import type { Logger as LoggerPort } from '../ports/logger.js';
import { scrubSecrets, scrubText, secretRedactPaths } from './secret-scrub.js';

/** What {@link createLogger} builds. */
export interface LoggerOptions {
  readonly level: LevelWithSilent;
  /** The process or component name, written as `name` on every line. */
  readonly name: string;
  /** Where JSON lines go (default: stdout). Any object with `write(line)` works, e.g. in tests. */
  readonly destination?: DestinationStream;
  /** Fields on every line (service id, instance id). Scrubbed like everything else. */
  readonly base?: Readonly<Record<string, string | number>>;
}

/**
 * A pino JSON logger that keeps credentials out of log lines, in three
 * layers:
 * 1. pino `redact` paths for the usual credential field names (authorization, cookie, token,
 *    accessToken, password, secret, apiKey, principalAssertion, …) at the first four levels;
 * 2. a deep scrub of every logged object and of child bindings: any field whose name looks like a
 *    credential, at any depth and in any spelling (`X-Api-Key`, `db_password`), and JWT- or
 *    `Bearer …`-shaped text in any string, become "[redacted]"; Errors are serialized (with their
 *    cause chain) and scrubbed the same way;
 * 3. the message string is scrubbed for JWT/`Bearer` text too.
 *
 * None of this makes it fine to log a tool's arguments or output: log ids, codes and timings, and
 * when arguments are needed, only {@link redactArgumentsForLog}'s allow-listed view.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level,
      ...(options.base === undefined ? {} : { base: { ...options.base } }),
      redact: { paths: secretRedactPaths(), censor: REDACTED },
      formatters: {
        log: (obj) => scrubSecrets(obj),
        bindings: (bindings) => scrubSecrets(bindings),
      },
      serializers: {
        // Errors were already serialized and scrubbed by the log formatter; anything else is left.
        err: (value: unknown) => scrubSecrets(value),
        msg: (value: unknown) => (typeof value === 'string' ? scrubText(value) : value),
      },
    },
    options.destination,
  );
}

/** Where a log line is about: the call, its task and trace, and the bus position being handled. */
export interface LogContext {
  readonly callId?: string;
  readonly taskId?: string;
  readonly traceId?: string;
  readonly topic?: string;
  readonly partition?: number;
  readonly offset?: string;
}

const CONTEXT_FIELDS = ['callId', 'taskId', 'traceId', 'topic', 'partition', 'offset'] as const;

/** Where a context logger came from: the logger it writes through and every field it adds. */
interface BoundContext {
  readonly base: LoggerPort;
  readonly bindings: Readonly<Record<string, string | number>>;
}

const BOUND = Symbol('toolgate.logContext');

type ContextLogger = LoggerPort & { readonly [BOUND]?: BoundContext };

type PortLevel = keyof LoggerPort;

/** A pino logger: makes children and can say whether a level would be written. */
function isPino(logger: LoggerPort): logger is Logger {
  const candidate = logger as Partial<Logger>;
  return typeof candidate.child === 'function' && typeof candidate.isLevelEnabled === 'function';
}

/**
 * A logger whose lines carry the given context fields. Only the six fields of {@link LogContext}
 * are copied (so passing a whole event or execution context cannot smuggle in a principal
 * assertion or arguments); undefined ones are left out. Given a logger this function returned, the
 * fields of both are carried (the newer win).
 *
 * Over pino, lines are written by a pino child with those bindings, made on the first line written
 * at an enabled level, not before: a child costs its bindings' secret scrub, and most handled
 * messages (one context per message, another per call) log nothing at info. Any other logger of the
 * libs/ports logging port gets the fields added to each logged object (the object's own fields
 * win), so code written against the port keeps its context with a test's recording logger too.
 */
export function withLogContext(logger: LoggerPort, context: LogContext): LoggerPort {
  const own: Record<string, string | number> = {};
  for (const field of CONTEXT_FIELDS) {
    const value = context[field];
    if (value !== undefined) own[field] = value;
  }
  const outer = (logger as ContextLogger)[BOUND];
  const bound: BoundContext =
    outer === undefined
      ? { base: logger, bindings: own }
      : { base: outer.base, bindings: { ...outer.bindings, ...own } };
  return isPino(bound.base) ? lazyPinoChild(bound.base, bound) : portWithContext(bound);
}

function lazyPinoChild(base: Logger, bound: BoundContext): ContextLogger {
  let child: Logger | undefined;
  const at =
    (level: PortLevel) =>
    (obj: object, msg?: string): void => {
      if (!base.isLevelEnabled(level)) return;
      child ??= base.child(bound.bindings);
      child[level](obj, msg);
    };
  return { [BOUND]: bound, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function portWithContext(bound: BoundContext): ContextLogger {
  const { base, bindings } = bound;
  const at =
    (level: PortLevel) =>
    (obj: object, msg?: string): void =>
      base[level]({ ...bindings, ...obj }, msg);
  return { [BOUND]: bound, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * A call's arguments reduced for a log line: top-level fields named in `allowList` are kept (then
 * scrubbed, so a credential nested inside a kept field is still removed), every other field keeps
 * its name with the value "[redacted]" — the same rule the audit record uses (`redactArguments`).
 * With no allow-list every value is redacted. Never throws; a non-object input yields `{}`.
 */
export function redactArgumentsForLog(
  args: unknown,
  allowList: readonly string[] | undefined,
): Record<string, unknown> {
  return scrubSecrets(redactArguments(args, allowList));
}
