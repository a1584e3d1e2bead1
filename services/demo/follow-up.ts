import type { DemoConfig } from './config.js';
import { redactUrl } from './server-checks.js';

/**
 * The environment the toolgate CLI (services/cli/config.ts) needs to read one kafka-mode run:
 * the run's Postgres schema as the URL's `search_path` (pg reads `options` from the URL), its topic
 * prefix and its Redis key prefix, and the servers it ran on.
 */
export function cliEnvironment(runId: string, servers: DemoConfig['servers']): Record<string, string> {
  const url = new URL(servers.databaseUrl);
  url.searchParams.set('options', `-c search_path="${runId}"`);
  return {
    DATABASE_URL: url.href,
    KAFKA_BROKERS: servers.kafkaBrokers.join(','),
    SCHEMA_REGISTRY_URL: servers.schemaRegistryUrl,
    REDIS_URL: servers.redisUrl,
    TOOLGATE_TOPIC_PREFIX: runId,
    REDIS_KEY_PREFIX: `${runId}:`,
  };
}

/** The CLI commands printed after a run, as argument lists after `npm run toolgate --`. */
export const INSPECT_COMMANDS: readonly (readonly string[])[] = [
  ['audit', 'query', '--tenant', 't1'],
  ['audit', 'who', 'O-5512', '--tool', 'issue_refund', '--tenant', 't1'],
  ['audit', 'verify', '--chain', 't1'],
  ['dlq', 'list'],
];

/**
 * What a kafka-mode run prints last: how to inspect what it left on the servers with the toolgate
 * CLI (the variables to export, then the commands, each ready to paste) and how to remove it. A
 * password in a URL is shown as `***` (the operator puts it back); without one the lines are
 * exact.
 */
export function kafkaRunFollowUp(runId: string, servers: DemoConfig['servers']): string[] {
  const shown = Object.entries(cliEnvironment(runId, servers)).map(
    ([name, value]) => [name, name.endsWith('_URL') ? redactUrl(value) : value] as const,
  );
  const hidden = shown.some(([name, value]) => value !== cliEnvironment(runId, servers)[name]);
  return [
    `This run left its topics (${runId}.*), Postgres schema "${runId}" and Redis keys (${runId}:*) on the servers.`,
    'Inspect them with the toolgate CLI (from this directory):',
    ...shown.map(([name, value]) => `  export ${name}=${shellQuote(value)}`),
    ...(hidden ? ['  (a password is shown as ***: put yours back in)'] : []),
    ...INSPECT_COMMANDS.map((argv) => `  npm run toolgate -- ${argv.join(' ')}`),
    'Remove everything the run created (topics, consumer groups, registry subjects, Redis keys, schema):',
    `  npm run demo -- --clean-up ${runId}`,
  ];
}

/** `value` as one shell word: bare when it is plainly safe, else in single quotes. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
