import { EVENT_KINDS, type EventKind } from '../../../libs/events/contracts.js';
import { topicNames } from '../../../libs/events/topics.js';
import { EXIT, UsageError } from '../cli-error.js';
import type { CommandSpec } from '../command.js';
import type { SettingName } from '../config.js';
import { ensureTopics, type TopicPlan } from '../kafka-topics.js';
import { formatTable } from '../table.js';
import { CALLS_TOPIC_CONFIGS } from '../../../libs/runtime/clients.js';

/** The executor's partition defaults (services/executor/config.ts), so its start-up check agrees. */
const DEFAULT_PARTITIONS: Readonly<Record<EventKind, number>> = { calls: 12, results: 12, audit: 6, dlq: 3 };
const PARTITION_VARIABLE: Readonly<Record<EventKind, SettingName>> = {
  calls: 'CALLS_PARTITIONS',
  results: 'RESULTS_PARTITIONS',
  audit: 'AUDIT_PARTITIONS',
  dlq: 'DLQ_PARTITIONS',
};
const MAX_PARTITIONS = 10_000;

/** `topics create`: the four toolgate topics, created if missing, checked if present. */
export const topicsCreateCommand: CommandSpec = {
  path: ['topics', 'create'],
  summary: 'Create the calls, results, audit and dlq topics (idempotent).',
  details: [
    'Creates <prefix>.calls, .results, .audit and .dlq where missing and reports each topic as the broker describes it. A topic that already exists is left as it is; when its partition count, replication factor or retention differs from what was asked, it is reported as a mismatch and the command exits 1 (changing the partition count moves keys between partitions, which breaks per-key order: a deliberate operation, not a side effect).',
    "The calls topic is created with message.timestamp.type=LogAppendTime: the executor judges each call's principal assertion as of the time the broker accepted it, which a producer cannot backdate. An existing calls topic with CreateTime is reported as a mismatch; switch it with `kafka-configs.sh --alter --entity-type topics --entity-name <prefix>.calls --add-config message.timestamp.type=LogAppendTime`.",
    "Partition counts default to the executor's (CALLS_PARTITIONS=12, RESULTS_PARTITIONS=12, AUDIT_PARTITIONS=6, DLQ_PARTITIONS=3, read from the environment like the executor does), so the executor's start-up check agrees; --partitions sets all four, --<kind>-partitions one.",
  ],
  positionals: [],
  options: {
    prefix: {
      type: 'string',
      valueName: 'prefix',
      description: 'Topic name prefix.',
      defaultText: '$TOOLGATE_TOPIC_PREFIX, else toolgate',
    },
    partitions: { type: 'string', valueName: 'n', description: 'Partitions of all four topics.' },
    ...Object.fromEntries(
      EVENT_KINDS.map((k) => [
        `${k}-partitions`,
        {
          type: 'string',
          valueName: 'n',
          description: `Partitions of the ${k} topic.`,
          defaultText: `$${PARTITION_VARIABLE[k]}, else ${DEFAULT_PARTITIONS[k]}`,
        },
      ]),
    ),
    replication: {
      type: 'string',
      valueName: 'n',
      description: 'Replication factor.',
      defaultText: "the broker's default",
    },
    'retention-ms': {
      type: 'string',
      valueName: 'ms',
      description: 'retention.ms of all four topics (-1: keep forever).',
      defaultText: "the broker's default",
    },
  },
  needs: ['kafka'],
  examples: [
    'toolgate topics create',
    'toolgate topics create --prefix staging --partitions 24 --replication 3 --retention-ms 604800000',
  ],
  async run({ args, out, config, resources }) {
    const prefix =
      config.get('TOOLGATE_TOPIC_PREFIX', args.command, { flag: 'prefix', value: args.string('prefix') }) ??
      'toolgate';
    const all = args.int('partitions', { min: 1, max: MAX_PARTITIONS });
    const replication = args.int('replication', { min: 1, max: 100 });
    const retention = args.int('retention-ms', { min: -1, max: Number.MAX_SAFE_INTEGER });
    if (retention === 0)
      throw new UsageError('--retention-ms must be positive, or -1 to keep forever.', args.command);
    const names = topicNames(prefix);
    const plans: TopicPlan[] = EVENT_KINDS.map((kind) => ({
      topic: names[kind],
      partitions:
        args.int(`${kind}-partitions`, { min: 1, max: MAX_PARTITIONS }) ??
        all ??
        (config.get(PARTITION_VARIABLE[kind], args.command) as number | undefined) ??
        DEFAULT_PARTITIONS[kind],
      ...(replication === undefined ? {} : { replicationFactor: replication }),
      ...(retention === undefined ? {} : { retentionMs: retention }),
      ...(kind === 'calls' ? { configs: CALLS_TOPIC_CONFIGS } : {}),
    }));
    const admin = await resources.kafkaAdmin();
    const topics = await ensureTopics(admin, plans);
    const ok = topics.every((t) => t.status !== 'mismatch');
    out.json({ ok, prefix, topics });
    out.text(
      formatTable(
        [
          { header: 'TOPIC' },
          { header: 'PARTITIONS', align: 'right' },
          { header: 'REPLICATION', align: 'right' },
          { header: 'RETENTION.MS', align: 'right' },
          { header: 'STATUS' },
        ],
        topics.map((t) => [t.topic, t.partitions, t.replicationFactor, t.retentionMs, t.status]),
      ),
    );
    for (const t of topics) for (const p of t.problems) out.text(`  ${t.topic} ${p}; left unchanged.`);
    return ok ? EXIT.ok : EXIT.failure;
  },
};
