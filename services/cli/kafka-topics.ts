import kafkajs, { type Admin } from 'kafkajs';
import { validateTopicName } from '../../libs/bus/validate.js';

// kafkajs is CommonJS and its enums are not detectable as named ESM exports: read them off the default.

/** One topic as it should be. */
export interface TopicPlan {
  readonly topic: string;
  readonly partitions: number;
  /** Undefined: the broker's default replication factor. */
  readonly replicationFactor?: number;
  /** `retention.ms` to create it with (-1: keep forever); undefined: the broker's default. */
  readonly retentionMs?: number;
  /**
   * Other topic configs to create it with (e.g. the calls topic's `message.timestamp.type`); an
   * existing topic whose value differs is reported as a mismatch.
   */
  readonly configs?: Readonly<Record<string, string>>;
}

/** One topic as it is after {@link ensureTopics}. */
export interface TopicOutcome {
  readonly topic: string;
  /**
   * `created` by this run; `exists` and matches the plan; `mismatch`: exists and differs (see
   * `problems`); nothing about an existing topic is changed.
   */
  readonly status: 'created' | 'exists' | 'mismatch';
  readonly partitions: number;
  readonly replicationFactor: number;
  /** The topic's effective `retention.ms`, as the broker reports it. */
  readonly retentionMs: string | null;
  readonly problems: readonly string[];
}

/**
 * Creates the planned topics that do not exist (waiting for partition leaders, with `retention.ms`
 * when planned) and reports every planned topic as the broker then describes it. Idempotent and safe
 * to race: a topic created meanwhile by someone else counts as existing. An existing topic is never
 * altered: a different partition count (which would move keys between partitions and so break
 * per-key order), replication factor, retention or planned config is reported as `mismatch` for a
 * person to change deliberately. Throws for an invalid name or a plan the broker refuses (e.g. more replicas than
 * brokers).
 */
export async function ensureTopics(admin: Admin, plans: readonly TopicPlan[]): Promise<TopicOutcome[]> {
  for (const p of plans) validateTopicName(p.topic);
  const existing = new Set(await admin.listTopics());
  const missing = plans.filter((p) => !existing.has(p.topic));
  const created = new Set<string>();
  if (missing.length > 0) {
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((p) => ({
          topic: p.topic,
          numPartitions: p.partitions,
          replicationFactor: p.replicationFactor ?? -1,
          configEntries: [
            ...(p.retentionMs === undefined ? [] : [{ name: 'retention.ms', value: String(p.retentionMs) }]),
            ...Object.entries(p.configs ?? {}).map(([name, value]) => ({ name, value })),
          ],
        })),
      });
    } catch (err) {
      if (!onlyAlreadyExists(err)) throw err;
    }
    // A topic that someone else created between listTopics and createTopics is not ours.
    const now = new Set(await admin.listTopics());
    for (const p of missing) if (now.has(p.topic)) created.add(p.topic);
  }
  const names = plans.map((p) => p.topic);
  const { topics } = await admin.fetchTopicMetadata({ topics: names });
  const configNames = [...new Set(plans.flatMap((p) => Object.keys(p.configs ?? {})))];
  const described = await configsOf(admin, names, ['retention.ms', ...configNames]);
  return plans.map((plan) => {
    const meta = topics.find((t) => t.name === plan.topic);
    const partitions = meta?.partitions.length ?? 0;
    const replicationFactor = Math.min(...(meta?.partitions.map((p) => p.replicas.length) ?? [0]));
    const configs = described.get(plan.topic) ?? new Map<string, string>();
    const retentionMs = configs.get('retention.ms') ?? null;
    const problems: string[] = [];
    if (partitions !== plan.partitions) problems.push(`has ${partitions} partitions, not ${plan.partitions}`);
    if (plan.replicationFactor !== undefined && replicationFactor !== plan.replicationFactor) {
      problems.push(`has replication factor ${replicationFactor}, not ${plan.replicationFactor}`);
    }
    if (plan.retentionMs !== undefined && retentionMs !== String(plan.retentionMs)) {
      problems.push(`has retention.ms ${retentionMs ?? 'unknown'}, not ${plan.retentionMs}`);
    }
    for (const [name, value] of Object.entries(plan.configs ?? {})) {
      const actual = configs.get(name);
      if (actual !== value) problems.push(`has ${name} ${actual ?? 'unknown'}, not ${value}`);
    }
    const status = problems.length > 0 ? 'mismatch' : created.has(plan.topic) ? 'created' : 'exists';
    return { topic: plan.topic, status, partitions, replicationFactor, retentionMs, problems };
  });
}

/** The effective values of `configNames` of each topic, by topic then config name. */
async function configsOf(
  admin: Admin,
  topics: readonly string[],
  configNames: readonly string[],
): Promise<Map<string, Map<string, string>>> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({
      type: kafkajs.ConfigResourceTypes.TOPIC,
      name,
      configNames: [...configNames],
    })),
  });
  const out = new Map<string, Map<string, string>>();
  for (const r of resources) {
    out.set(r.resourceName, new Map(r.configEntries.map((e) => [e.configName, e.configValue])));
  }
  return out;
}

/** Whether a createTopics failure only says that topics already exist (a concurrent creator won). */
function onlyAlreadyExists(err: unknown): boolean {
  const e = err as { type?: unknown; errors?: unknown } | null;
  if (e?.type === 'TOPIC_ALREADY_EXISTS') return true;
  const nested = Array.isArray(e?.errors) ? (e.errors as unknown[]) : [];
  return nested.length > 0 && nested.every(onlyAlreadyExists);
}
