import { describe, expect, it } from 'vitest';
import { newClusterId } from '../../../deploy/local/kafka-server.js';

describe('newClusterId', () => {
  it('is a 16-byte URL-safe base64 id that never starts with "-" (StorageTool would take it for an option)', () => {
    // One id in 64 would start with '-' if drawn blindly: 10,000 draws meet that case ~150 times.
    for (let i = 0; i < 10_000; i += 1) {
      const id = newClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
  });
});
