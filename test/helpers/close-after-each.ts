import { afterEach } from 'vitest';

/**
 * Registers, in the enclosing `describe` (or the file), an `afterEach` hook that closes what
 * `current()` returns: the resource the test just made, read from the suite's own variable:
 *
 *     let h: StoreHarness;
 *     closeAfterEach(() => h);
 *
 * When the test made none (`current()` gives undefined), the hook closes nothing.
 */
export function closeAfterEach(current: () => { close(): unknown } | undefined): void {
  afterEach(async () => {
    await current()?.close();
  });
}
