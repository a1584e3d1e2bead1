import { describe, expect, it } from 'vitest';
import { allOptions } from '../../../services/cli/args.js';
import { commandName } from '../../../services/cli/command.js';
import { COMMAND_GROUPS } from '../../../services/cli/commands/index.js';
import { cli } from './capture.js';

const commands = COMMAND_GROUPS.flatMap((g) => g.commands);

describe('help', () => {
  it('the top-level help lists every command, the environment and the exit codes', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const run = await cli(argv);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      for (const c of commands) expect(run.stdout).toContain(`  ${commandName(c)}  `);
      for (const v of [
        'DATABASE_URL',
        'KAFKA_BROKERS',
        'SCHEMA_REGISTRY_URL',
        'REDIS_URL',
        'TOOLGATE_TOPIC_PREFIX',
      ]) {
        expect(run.stdout).toContain(v);
      }
      expect(run.stdout).toMatch(
        /Exit codes:\n {2}0 {2}ok\n {2}1 .*\n {2}2 {2}usage error.*\n {2}3 .*reached/,
      );
    }
  });

  it('each group has a help page listing its commands', async () => {
    for (const group of COMMAND_GROUPS) {
      const run = await cli([group.name, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`toolgate ${group.name} — ${group.summary}`);
      for (const c of group.commands) expect(squash(run.stdout)).toContain(`${c.path[1]} ${c.summary}`);
      expect((await cli(['help', group.name])).stdout).toBe(run.stdout);
    }
  });

  it.each(commands.map((c) => [commandName(c), c] as const))(
    '%s --help documents every argument, option and example without contacting anything',
    async (name, spec) => {
      // No environment at all: help must not need DATABASE_URL, brokers or anything else.
      const run = await cli([...spec.path, '--help']);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(run.stdout.startsWith(`toolgate ${name} — ${spec.summary}\n\nUsage: toolgate ${name}`)).toBe(
        true,
      );
      for (const p of spec.positionals) expect(run.stdout).toContain(`<${p.name}>`);
      for (const [flag, option] of Object.entries(allOptions(spec))) {
        expect(run.stdout).toContain(`--${flag}`);
        expect(squash(run.stdout)).toContain(squash(option.description));
      }
      for (const e of spec.examples) expect(run.stdout).toContain(e);
      expect(spec.examples.length).toBeGreaterThan(0);
      expect(run.stdout).toContain('Exit codes:');
      // The same page from `help <group> <command>` and with -h after other (even wrong) arguments.
      expect((await cli(['help', ...spec.path])).stdout).toBe(run.stdout);
      expect((await cli([...spec.path, '--no-such-flag', '-h'])).stdout).toBe(run.stdout);
    },
  );

  it('wraps help text at 100 columns (examples aside)', async () => {
    const pages = [
      ['--help'],
      ...COMMAND_GROUPS.map((g) => [g.name, '--help']),
      ...commands.map((c) => [...c.path, '--help']),
    ];
    for (const argv of pages) {
      const { stdout } = await cli(argv);
      for (const line of stdout.split('\n')) {
        if (line.startsWith('  toolgate ')) continue;
        expect(line.length, `${argv.join(' ')}: ${line}`).toBeLessThanOrEqual(100);
      }
    }
  });
});

/** Runs of whitespace as one space, so wrapped text compares equal to its one-line source. */
function squash(text: string): string {
  return text.replace(/\s+/g, ' ');
}
