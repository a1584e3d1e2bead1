import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** One toolgate service process (services/<name>/main.ts under tsx), as a deployment runs it. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Where its /metrics, /healthz and /readyz answer. */
  readonly httpPort: number;
  /** Its stdout (pino JSON lines) and stderr, for diagnostics and scans. */
  readonly output: string[];
  /** Resolves once GET /readyz answers 200; rejects when the process exits first or `timeoutMs` passes. */
  ready(timeoutMs?: number): Promise<void>;
  /** Resident set size now, kB (/proc/<pid>/status VmRSS). */
  rssKb(): number;
  /** SIGTERM, then waits for the exit; SIGKILL after `graceMs`. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts `services/<service>/main.ts` with exactly `env` (plus PATH and HOME) and `HTTP_PORT` set to
 * `httpPort`. The process's own config.ts parses the environment, so a variable it does not know is
 * not silently relied on: the caller passes the names that config declares.
 */
export function startService(
  name: string,
  service: 'executor' | 'audit-sink' | 'reconciler' | 'mcp-gateway',
  httpPort: number,
  env: Record<string, string>,
): ServiceProcess {
  const main = fileURLToPath(new URL(`../../../services/${service}/main.ts`, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, HTTP_PORT: String(httpPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const collect = (stream: NodeJS.ReadableStream) => {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      output.push(...lines);
    });
    stream.on('end', () => {
      if (pending) output.push(pending);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const pid = child.pid!;
  return {
    name,
    pid,
    child,
    httpPort,
    output,
    async ready(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (exitCode !== undefined) {
          throw new Error(
            `${name} exited (${exitCode}) before it was ready:\n${output.slice(-20).join('\n')}`,
          );
        }
        const res = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => undefined);
        if (res?.status === 200) return;
        if (Date.now() > deadline) {
          const status = res === undefined ? 'no answer' : `${res.status} ${await res.text()}`;
          throw new Error(
            `${name}: /readyz on port ${httpPort} not 200 within ${timeoutMs} ms (${status}):\n` +
              output.slice(-20).join('\n'),
          );
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    rssKb() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
      if (!m) throw new Error(`no VmRSS for ${name} (pid ${pid})`);
      return Number(m[1]);
    },
    async stop(graceMs = 20_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
