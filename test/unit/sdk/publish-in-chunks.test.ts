import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../../libs/ports/event-bus.js';
import {
  chunkByBytes,
  isRefusedAsTooLarge,
  messageBytes,
  publishInChunks,
} from '../../../services/sdk/publish-in-chunks.js';

const message = (key: string, bytes: number): OutgoingMessage => ({ key, value: Buffer.alloc(bytes) });

describe('chunkByBytes', () => {
  it('cuts messages, in order, into chunks of at most maxBytes; a larger message goes alone', () => {
    const messages = [
      message('a', 40),
      message('b', 40),
      message('c', 200),
      message('d', 10),
      message('e', 90),
    ];
    const chunks = chunkByBytes(messages, 100);
    expect(chunks.map((c) => c.map((m) => m.key))).toEqual([['a', 'b'], ['c'], ['d'], ['e']]);
    expect(chunks.flat()).toEqual(messages);
    for (const chunk of chunks.filter((c) => c.length > 1)) {
      expect(chunk.reduce((n, m) => n + messageBytes(m), 0)).toBeLessThanOrEqual(100);
    }
  });

  it('gives no chunk for no messages', () => {
    expect(chunkByBytes([], 100)).toEqual([]);
  });
});

describe('publishInChunks', () => {
  it('splits a publish the broker refuses as too large and returns only the single messages it still refuses', async () => {
    const sent: string[][] = [];
    const broker = {
      // Accepts at most 100 bytes per publish, refusing larger ones as Kafka does.
      async publish(_topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
        if (messages.reduce((n, m) => n + messageBytes(m), 0) > 100) {
          throw Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' });
        }
        sent.push(messages.map((m) => m.key));
      },
    };
    const messages = [message('a', 60), message('b', 60), message('c', 150), message('d', 30)];
    const { tooLarge } = await publishInChunks(broker, 'calls', messages, 1_000);
    expect(tooLarge.map((m) => m.key)).toEqual(['c']);
    expect(sent).toEqual([['a'], ['b'], ['d']]);
  });

  it('rejects with any other failure', async () => {
    const broken = { publish: () => Promise.reject(new Error('broker down')) };
    await expect(publishInChunks(broken, 'calls', [message('a', 1)], 100)).rejects.toThrow('broker down');
  });

  it('recognizes a size refusal wrapped as a cause', () => {
    const kafka = Object.assign(new Error('x'), { type: 'RECORD_LIST_TOO_LARGE' });
    expect(isRefusedAsTooLarge(new Error('wrapped', { cause: kafka }))).toBe(true);
    expect(isRefusedAsTooLarge(new Error('other'))).toBe(false);
  });
});
