import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../libs/core/system-clock.js';
import { LegacyFilingClient } from '../../../services/legacy-filing/client.js';
import { DATABASE_URL } from '../../helpers/env.js';
import { uniqueName } from '../../helpers/names.js';

const schema = uniqueName('legacy_proc');
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

/** The fake runs as its own process too, configured only through its environment. */
describe('legacy filing service as a process', () => {
  it('starts on a free loopback port, files, loses answers as configured, and stops cleanly on SIGTERM', async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'services/legacy-filing/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL,
        LEGACY_FILING_SCHEMA: schema,
        LEGACY_FILING_PORT: '0',
        LEGACY_FILING_DROP_AFTER_COMMIT_RATE: '1',
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    const firstLine = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child!.stdout! });
      lines.once('line', resolve);
      child!.once('exit', (code) => reject(new Error(`exited with ${code} before listening`)));
    });
    const { listening } = JSON.parse(firstLine) as { listening: string };
    expect(listening).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const client = new LegacyFilingClient({ baseUrl: listening, clock: systemClock, timeoutMs: 5_000 });
    const filing = {
      tenant: 't1',
      filerId: '123456789',
      filerName: 'Process Test Ltd',
      formType: 'vat_return' as const,
      period: '2024-Q4',
      amountCents: 12_345,
    };
    // Every answer is lost after the commit: the caller sees an unknown outcome, the service has it.
    await expect(client.submit(filing)).rejects.toMatchObject({ code: 'TIMEOUT' });
    const found = await client.lookup(filing);
    expect(found).toEqual([
      expect.objectContaining({
        filerId: '123456789',
        formType: 'vat_return',
        period: '2024-Q4',
        amountCents: 12_345,
        status: 'received',
        confirmationNumber: expect.stringMatching(/^LF\d{10}$/),
      }),
    ]);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
