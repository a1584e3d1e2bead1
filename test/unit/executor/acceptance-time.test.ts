import { describe, expect, it } from 'vitest';
import { acceptanceTimeMs, callsTimestampsTrusted } from '../../../services/executor/acceptance-time.js';
import { LOG_APPEND_TIME, TIMESTAMP_TYPE_CONFIG } from '../../../libs/runtime/clients.js';
import type { Logger } from '../../../libs/ports/logger.js';

const NOW = Date.UTC(2030, 5, 1, 12, 0, 0);

function capturingLogger(): { logger: Logger; warnings: Array<{ obj: object; msg?: string }> } {
  const warnings: Array<{ obj: object; msg?: string }> = [];
  const ignore = (): void => undefined;
  return {
    warnings,
    logger: {
      debug: ignore,
      info: ignore,
      warn: (obj, msg) => warnings.push({ obj, ...(msg === undefined ? {} : { msg }) }),
      error: ignore,
    },
  };
}

describe('acceptanceTimeMs', () => {
  it('is the broker timestamp when trusted, never later than now, and now otherwise', () => {
    expect(acceptanceTimeMs(NOW - 60_000, true, NOW)).toBe(NOW - 60_000);
    // A timestamp from the future (a skewed clock) cannot make a not-yet-valid assertion valid.
    expect(acceptanceTimeMs(NOW + 60_000, true, NOW)).toBe(NOW);
    expect(acceptanceTimeMs(NOW - 60_000, false, NOW)).toBe(NOW);
    for (const bad of [Number.NaN, 0, -1, Number.POSITIVE_INFINITY]) {
      expect(acceptanceTimeMs(bad, true, NOW)).toBe(NOW);
    }
  });
});

describe('callsTimestampsTrusted', () => {
  it('trusts LogAppendTime silently, and warns with the fix for CreateTime or an unreadable config', async () => {
    const quiet = capturingLogger();
    const asked: string[] = [];
    const trusted = await callsTimestampsTrusted(
      async (topic, name) => {
        asked.push(`${topic}/${name}`);
        return LOG_APPEND_TIME;
      },
      'p.calls',
      quiet.logger,
    );
    expect(trusted).toBe(true);
    expect(asked).toEqual([`p.calls/${TIMESTAMP_TYPE_CONFIG}`]);
    expect(quiet.warnings).toEqual([]);

    const create = capturingLogger();
    expect(await callsTimestampsTrusted(async () => 'CreateTime', 'p.calls', create.logger)).toBe(false);
    expect(create.warnings).toHaveLength(1);
    expect(create.warnings[0]!.msg).toContain('keeps producer timestamps');
    expect(JSON.stringify(create.warnings[0]!.obj)).toContain(
      '--entity-name p.calls --add-config message.timestamp.type=LogAppendTime',
    );

    const down = capturingLogger();
    const failing = async (): Promise<string> => {
      throw new Error('broker unreachable');
    };
    expect(await callsTimestampsTrusted(failing, 'p.calls', down.logger)).toBe(false);
    expect(down.warnings).toHaveLength(1);
  });
});
