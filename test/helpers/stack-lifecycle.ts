import { afterAll, beforeAll } from 'vitest';

/** Something a suite opens once and closes after its last test: a stack, a client, a schema. */
export interface Closable {
  close(): unknown;
}

export interface OpenForSuiteOptions<T> {
  /** How to close what `open` gave; default: its `close()`. */
  readonly close?: (opened: T) => unknown;
  /** Timeout of the `beforeAll` hook that opens it (vitest's default when absent). */
  readonly openTimeoutMs?: number;
  /** Timeout of the `afterAll` hook that closes it (vitest's default when absent). */
  readonly closeTimeoutMs?: number;
}

/**
 * Registers, in the enclosing `describe` (or the file), a `beforeAll` hook that runs `open` and an
 * `afterAll` hook that closes what it returned (awaited; a rejection fails the hook). `open` usually
 * assigns the suite's own variable as well, so the tests keep reading it directly:
 *
 *     let stack: SdkStack;
 *     openForSuite(async () => (stack = await createSdkStack('sdk_it')));
 *
 * When `open` failed or never ran, the `afterAll` hook closes nothing.
 */
export function openForSuite<T extends Closable>(
  open: () => T | Promise<T>,
  options?: OpenForSuiteOptions<T>,
): void;
export function openForSuite<T>(
  open: () => T | Promise<T>,
  options: OpenForSuiteOptions<T> & { readonly close: (opened: T) => unknown },
): void;
export function openForSuite<T>(open: () => T | Promise<T>, options: OpenForSuiteOptions<T> = {}): void {
  let opened: { readonly value: T } | undefined;
  beforeAll(async () => {
    opened = { value: await open() };
  }, options.openTimeoutMs);
  afterAll(async () => {
    if (opened === undefined) return;
    const { value } = opened;
    opened = undefined;
    await (options.close ?? ((v: T) => (v as unknown as Closable).close()))(value);
  }, options.closeTimeoutMs);
}
