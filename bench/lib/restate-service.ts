/**
 * The Restate peer's service endpoint, run as a child process by restate-peer.ts:
 * `node --import tsx bench/lib/restate-service.ts <restate-sdk entry> <port>`. One service, `bench`,
 * with one handler, `noop`: a single durable step (`ctx.run`) around a no-op, the smallest durable
 * unit of work Restate offers. Prints `listening <port>` once it serves.
 */

// The Restate TypeScript SDK uses Promise.withResolvers, which Node has only from 22.
const withResolvers = <T>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
} => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};
const promiseCtor = Promise as unknown as { withResolvers?: typeof withResolvers };
promiseCtor.withResolvers ??= withResolvers;

/** The part of the SDK this endpoint uses (it is loaded from the benchmark's cache, untyped here). */
interface RestateSdk {
  service(definition: {
    name: string;
    handlers: Record<string, (ctx: RunContext, input: unknown) => Promise<unknown>>;
  }): unknown;
  endpoint(): { bind(service: unknown): { listen(port: number): Promise<number> } };
}
interface RunContext {
  run<T>(name: string, action: () => T): Promise<T>;
}

const [entry, port] = process.argv.slice(2);
if (entry === undefined || port === undefined)
  throw new Error('usage: restate-service.ts <sdk entry> <port>');
const sdk = (await import(entry)) as RestateSdk;
const bench = sdk.service({
  name: 'bench',
  handlers: {
    noop: (ctx, input) => ctx.run('noop', () => ({ ok: true, n: (input as { n?: number } | null)?.n ?? 0 })),
  },
});
const listening = await sdk.endpoint().bind(bench).listen(Number(port));
console.log(`listening ${listening}`);
