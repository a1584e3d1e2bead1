import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../../services/executor/main.ts', import.meta.url));

/** One executor process (services/executor/main.ts run by tsx), as a deployment would start it. */
export interface ExecutorProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once the executor logged that it joined its group; rejects if it exits first. */
  readonly ready: Promise<void>;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its log lines (pino JSON) and stderr, for diagnostics. */
  readonly output: string[];
}

/** How to start it: by default services/executor/main.ts through tsx, from the repository root. */
export interface ExecutorCommand {
  /** The program and its arguments, e.g. an installed package's `toolgate executor --catalog …`. */
  readonly argv: readonly string[];
  readonly cwd: string;
}

const FROM_SOURCE: ExecutorCommand = { argv: [process.execPath, '--import', 'tsx', MAIN], cwd: REPO_ROOT };

/**
 * `launcher` is an argv prefix the process is started through (e.g. `ip netns exec <ns>`, which
 * execs in place, so `pid` is still the executor's).
 */
export function startExecutorProcess(
  name: string,
  env: Record<string, string>,
  launcher: readonly string[] = [],
  how: ExecutorCommand = FROM_SOURCE,
): ExecutorProcess {
  const [command, ...args] = [...launcher, ...how.argv];
  const child = spawn(command!, args, {
    cwd: how.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let markReady!: () => void;
  let failReady!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      failReady(
        new Error(`${name} exited (${code ?? signal}) before it was ready:\n${output.slice(-20).join('\n')}`),
      );
      resolve({ code, signal });
    });
  });
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      output.push(line);
      if (line.includes('"executor started"')) markReady();
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  return { name, child, pid: child.pid!, ready, exited, output };
}
