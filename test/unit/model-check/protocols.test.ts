import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * The Promela models of test/model-check, verified with Spin (see ARCHITECTURE.md, "Model-checked
 * protocols"): each model is turned into a C verifier (`spin -a`), compiled with gcc and run over its
 * whole state space. The fenced status-check rule and the case redrive/resolve protocol must hold in
 * every interleaving (errors: 0, search complete); the rule without effect deadlines that the fenced
 * one replaces must not (Spin finds a counterexample and writes its trail, printed here so a reader
 * sees the interleaving).
 *
 * Spin and gcc must be installed (`bash deploy/local/spin-install.sh`): without them every test here
 * fails, saying so, rather than being skipped.
 */

const MODELS = fileURLToPath(new URL('../../model-check/', import.meta.url));
const INSTALL_HINT = "run `bash deploy/local/spin-install.sh` (installs Debian's spin and gcc)";
/**
 * The verifications share a 2-core machine with everything else; at a load of 20 to 30 one search took
 * over two minutes. The limit only stops a hung pan: generous, never a timed assert.
 */
const TIMEOUT_MS = 600_000;
/** Deeper than any model's longest path (about 130 steps): a depth limit would cut the search short. */
const MAX_DEPTH = 100_000;

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/** Runs `command` to completion, stdout and stderr together; rejects only when it cannot start. */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Fails (never skips) when a tool the verification needs is missing. */
async function requireTool(command: string, versionFlag: string): Promise<void> {
  let probe: Run;
  try {
    probe = await run(command, [versionFlag], tmpdir());
  } catch (err) {
    throw new Error(`${command} is not installed: ${INSTALL_HINT}. (${String(err)})`);
  }
  if (probe.code !== 0)
    throw new Error(`${command} ${versionFlag} failed: ${INSTALL_HINT}.\n${probe.output}`);
}

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What one verifier run reported. */
interface Verification {
  readonly dir: string;
  readonly model: string;
  readonly output: string;
  readonly errors: number;
  readonly states: number;
  readonly depth: number;
  /** False when pan says the search stopped early (depth limit, out of memory, stopped at an error). */
  readonly complete: boolean;
  readonly summary: string;
}

/**
 * Verifies `model` in a fresh temp dir: `spin -a`, `gcc -O2 <cc flags> -o pan pan.c`, `./pan -m…`.
 * Every model here is safety-only (assertions and end states), hence -DSAFETY.
 */
async function verify(model: string, ccFlags: readonly string[]): Promise<Verification> {
  await requireTool('spin', '-V');
  await requireTool('gcc', '--version');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-spin-')));
  temps.push(dir);
  copyFileSync(join(MODELS, model), join(dir, model));

  const generated = await run('spin', ['-a', model], dir);
  if (generated.code !== 0) throw new Error(`spin -a ${model} failed:\n${generated.output}`);
  const compiled = await run('gcc', ['-O2', '-DSAFETY', ...ccFlags, '-o', 'pan', 'pan.c'], dir);
  if (compiled.code !== 0) throw new Error(`gcc could not compile ${model}'s verifier:\n${compiled.output}`);
  const checked = await run(join(dir, 'pan'), [`-m${MAX_DEPTH}`], dir);
  const output = checked.output;

  const errors = number(output, /errors: (\d+)/, model);
  const states = number(output, /(\d+) states, stored/, model);
  const depth = number(output, /depth reached (\d+)/, model);
  const incomplete =
    /Search not completed/.test(output) ||
    /max search depth too small/.test(output) ||
    /out of memory/i.test(output);
  const elapsed = /elapsed time ([\d.e+]+) seconds/.exec(output)?.[1] ?? '?';
  const summary = `${model}: ${states} states, depth reached ${depth}, errors: ${errors}, ${incomplete ? 'search stopped early' : 'search complete'}, pan ${elapsed} s`;
  return { dir, model, output, errors, states, depth, complete: !incomplete, summary };
}

function number(output: string, pattern: RegExp, model: string): number {
  const match = pattern.exec(output);
  if (match === null) throw new Error(`${model}: pan's output has no ${String(pattern)}:\n${output}`);
  return Number(match[1]);
}

/** The counterexample pan wrote, replayed step by step (`spin -t -p`), or why there is none. */
async function trail(v: Verification): Promise<string> {
  if (!existsSync(join(v.dir, `${v.model}.trail`))) return `(no trail file ${v.model}.trail)`;
  return (await run('spin', ['-t', '-p', v.model], v.dir)).output;
}

/** Asserts a model holds: no error in an exhaustive search. On failure the message carries the trail. */
async function expectHolds(v: Verification): Promise<void> {
  console.log(v.summary);
  const detail = v.errors > 0 ? `\n${await trail(v)}` : '';
  expect(v.errors, `${v.summary}\n${v.output}${detail}`).toBe(0);
  expect(v.complete, `${v.summary}: the search did not cover the whole state space\n${v.output}`).toBe(true);
  expect(v.states).toBeGreaterThan(0);
}

describe('model-checked one-effect protocols (Spin)', () => {
  it(
    'the status-check rule without effect deadlines can commit one call twice: Spin finds the interleaving',
    async () => {
      // Breadth-first: the counterexample found is a shortest one, the easiest to read.
      const v = await verify('status-check-today.pml', ['-DBFS']);
      const replay = await trail(v);
      console.log(`${v.summary}\ncounterexample (spin -t -p):\n${replay}`);
      expect(v.errors, `${v.summary}\n${v.output}`).toBeGreaterThanOrEqual(1);
      expect(existsSync(join(v.dir, 'status-check-today.pml.trail')), v.output).toBe(true);
      // The violated property is P1, at most one effect.
      expect(v.output).toMatch(/assertion violated \(commits<=1\)/);
      expect(replay).toMatch(/S commits request \d[\s\S]*S commits request \d/);
    },
    TIMEOUT_MS,
  );

  it(
    'the fenced status-check rule: at most one effect, never "failed" for an effect, in every interleaving',
    async () => {
      await expectHolds(await verify('status-check-fenced.pml', ['-DCOLLAPSE']));
    },
    TIMEOUT_MS,
  );

  it(
    'case redrive and resolve: one effect, no re-execution of a resolved case, one execution per redrive',
    async () => {
      await expectHolds(await verify('case-redrive.pml', ['-DCOLLAPSE']));
    },
    TIMEOUT_MS,
  );
});
