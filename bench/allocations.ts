/**
 * Where a benchmark's process allocates: runs another benchmark module in this process under V8's
 * sampling heap profiler, counting objects the garbage collector has already taken too (the churn
 * that costs GC time, not only what stays live), and prints the bytes sampled in all and the
 * allocation sites (function, file and line) that took the most. The whole profile is written as
 * JSON for a closer look (`--out`, default allocations.heapprofile in the working directory; Chrome
 * DevTools opens it).
 *
 *   npm run bench:build
 *   node dist/bench/bench/allocations.js dist/bench/bench/throughput.js --only toolgate --calls 30000 --repeats 1
 *
 * Compare two builds by their totals for the same workload: sampling is statistical (one sample
 * per `--interval` bytes, default 16 KiB), so read differences of a few percent as noise.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const TOP = 25;

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`, 3);
  if (at === -1) return fallback;
  const value = process.argv[at + 1] ?? fallback;
  process.argv.splice(at, 2);
  return value;
}

const target = process.argv[2];
if (target === undefined || target.startsWith('--')) {
  process.stderr.write(
    'usage: allocations.js <benchmark module> [its arguments] [--out F] [--interval BYTES]\n',
  );
  process.exit(2);
}
const out = option('out', 'allocations.heapprofile');
const interval = Number(option('interval', String(16 * 1024)));
// The benchmark reads its own arguments from process.argv: it sees itself as the script.
process.argv.splice(1, 2, path.resolve(target));

const session = new Session();
session.connect();
session.post('HeapProfiler.enable');
session.post('HeapProfiler.startSampling', {
  samplingInterval: interval,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});

let reported = false;
/** Stops sampling and prints the report; in-process inspector calls answer synchronously. */
function report(): void {
  if (reported) return;
  reported = true;
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err !== null) {
      process.stderr.write(`allocation profile failed: ${err.message}\n`);
      return;
    }
    const head = (result.profile as { head: ProfileNode }).head;
    writeFileSync(out, JSON.stringify(result.profile));
    const bySite = new Map<string, number>();
    let total = 0;
    const walk = (node: ProfileNode): void => {
      total += node.selfSize;
      const { functionName, url, lineNumber } = node.callFrame;
      const file = url.replace(/^.*node_modules\//, '').replace(pathToFileURL(process.cwd()).href + '/', '');
      const site = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child);
    };
    walk(head);
    const lines = [
      '',
      `## Allocations (sampled every ${interval} bytes, collected objects included)`,
      '',
      `bytes allocated in all: ${(total / 2 ** 20).toFixed(0)} MiB; profile written to ${out}`,
      '',
      '| share | MiB | site |',
      '| ---: | ---: | --- |',
      ...[...bySite]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(
          ([site, bytes]) =>
            `| ${((100 * bytes) / total).toFixed(1)} % | ${(bytes / 2 ** 20).toFixed(0)} | ${site} |`,
        ),
      '',
    ];
    process.stdout.write(lines.join('\n'));
  });
}

const exit = process.exit.bind(process);
process.exit = ((code?: number) => {
  report();
  exit(code);
}) as typeof process.exit;
process.on('beforeExit', report);
await import(pathToFileURL(path.resolve(target)).href);
