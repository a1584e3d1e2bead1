import { randomBytes } from 'node:crypto';
import {
  context as contextApi,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  type TimeInput,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

/**
 * A tracer provider that keeps finished spans in memory, written against the API interfaces only
 * (no SDK). Parents come from the context passed to `startSpan`, as an SDK tracer does; sampling is
 * "record everything".
 */

export interface RecordedSpan {
  readonly name: string;
  readonly kind: SpanKind;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly parentIsRemote: boolean;
  readonly traceFlags: number;
  readonly attributes: Attributes;
  readonly status: SpanStatus;
  readonly startTime: TimeInput;
  readonly endTime: TimeInput | undefined;
  readonly exceptions: readonly Exception[];
  readonly ended: boolean;
}

class MemorySpan implements Span {
  readonly #context: SpanContext;
  readonly #record: {
    -readonly [K in keyof RecordedSpan]: RecordedSpan[K];
  };
  readonly #finished: RecordedSpan[];

  constructor(name: string, options: SpanOptions, parent: SpanContext | undefined, finished: RecordedSpan[]) {
    const traceId = parent?.traceId ?? randomBytes(16).toString('hex');
    this.#context = { traceId, spanId: randomBytes(8).toString('hex'), traceFlags: parent?.traceFlags ?? 1 };
    this.#finished = finished;
    this.#record = {
      name,
      kind: options.kind ?? SpanKind.INTERNAL,
      traceId,
      spanId: this.#context.spanId,
      parentSpanId: parent?.spanId,
      parentIsRemote: parent?.isRemote === true,
      traceFlags: this.#context.traceFlags,
      attributes: { ...options.attributes },
      status: { code: SpanStatusCode.UNSET },
      startTime: options.startTime ?? Date.now(),
      endTime: undefined,
      exceptions: [],
      ended: false,
    };
  }

  spanContext(): SpanContext {
    return this.#context;
  }
  setAttribute(key: string, value: AttributeValue): this {
    this.#record.attributes = { ...this.#record.attributes, [key]: value };
    return this;
  }
  setAttributes(attributes: Attributes): this {
    this.#record.attributes = { ...this.#record.attributes, ...attributes };
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(_link: Link): this {
    return this;
  }
  addLinks(_links: Link[]): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.#record.status = status;
    return this;
  }
  updateName(name: string): this {
    this.#record.name = name;
    return this;
  }
  end(endTime?: TimeInput): void {
    if (this.#record.ended) throw new Error(`span ${this.#record.name} ended twice`);
    this.#record.ended = true;
    this.#record.endTime = endTime ?? Date.now();
    this.#finished.push({ ...this.#record });
  }
  isRecording(): boolean {
    return !this.#record.ended;
  }
  recordException(exception: Exception): void {
    this.#record.exceptions = [...this.#record.exceptions, exception];
  }
}

class MemoryTracer implements Tracer {
  constructor(private readonly finished: RecordedSpan[]) {}

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = contextApi.active()): Span {
    const parent = options.root === true ? undefined : trace.getSpanContext(ctx);
    return new MemorySpan(
      name,
      options,
      parent && isSpanContextValid(parent) ? parent : undefined,
      this.finished,
    );
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    ctx: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    a: SpanOptions | F,
    b?: Context | F,
    c?: F,
  ): ReturnType<F> {
    const fn = (c ?? (typeof b === 'function' ? b : a)) as F;
    const options = typeof a === 'function' ? {} : a;
    const ctx = b !== undefined && typeof b !== 'function' ? b : contextApi.active();
    const span = this.startSpan(name, options, ctx);
    const run = (s: Span): ReturnType<F> => fn(s) as ReturnType<F>;
    return contextApi.with(trace.setSpan(ctx, span), run, undefined, span);
  }
}

/** A provider whose tracers record into `spans` (finished spans, in end order). */
export class MemoryTracerProvider implements TracerProvider {
  readonly spans: RecordedSpan[] = [];
  getTracer(): Tracer {
    return new MemoryTracer(this.spans);
  }
}
