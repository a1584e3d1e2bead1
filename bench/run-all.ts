/**
 * `npm run bench`: every benchmark one after another, each in its own process (so one's memory,
 * connections and JIT state do not colour the next), with `--quick` passed through. The in-process
 * pipeline benchmark (bench/pipeline.ts) runs as it is, with BENCH_REPEATS=1 when quick. The soak is
 * not included (`npm run bench:soak`). Exits non-zero when any benchmark failed; the others still run.
 */
import { spawn } from 'node:child_process';
import { loadAverage, machineLine, say } from './lib/report.js';

const quick = process.argv.includes('--quick');
const BENCHES = [
  'token-cost.ts',
  'pipeline.ts',
  'throughput.ts',
  'latency.ts',
  'single-call.ts',
  'keyed-concurrency.ts',
  'scale-out.ts',
] as const;

function run(script: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', `bench/${script}`, ...(quick ? ['--quick'] : [])],
      {
        stdio: 'inherit',
        env: quick && script === 'pipeline.ts' ? { ...process.env, BENCH_REPEATS: '1' } : process.env,
      },
    );
    const forward = (signal: NodeJS.Signals): void => {
      if (child.pid !== undefined) process.kill(child.pid, signal);
    };
    process.once('SIGINT', forward);
    process.once('SIGTERM', forward);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}

say(`# toolgate benchmarks${quick ? ' (quick)' : ''}`);
say();
say(machineLine());
const failed: string[] = [];
for (const script of BENCHES) {
  say();
  if (script === 'pipeline.ts') say('## In-process pipeline (bench/pipeline.ts)\n');
  const code = await run(script);
  if (code !== 0) failed.push(`${script} (exit ${code})`);
}
say();
say(`load average at end ${loadAverage()}`);
if (failed.length > 0) {
  say(`failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
