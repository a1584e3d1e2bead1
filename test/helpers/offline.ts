import { afterAll, beforeAll } from 'vitest';
import { forbidOutboundNetwork, type NetworkGuard } from '../../libs/testing/no-network.js';

/**
 * Registers hooks that forbid outbound (non-loopback) network connections for the calling test file,
 * from before its first test until after its last, and returns a reader of the installed guard (what
 * it refused). Reading the guard before the hooks ran throws.
 */
export function offlineTestFile(): () => NetworkGuard {
  let guard: NetworkGuard | undefined;
  beforeAll(() => {
    guard = forbidOutboundNetwork();
  });
  afterAll(() => {
    guard?.restore();
  });
  return () => {
    if (guard === undefined) throw new Error('the network guard is read before it was installed');
    return guard;
  };
}
