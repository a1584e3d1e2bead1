/**
 * Every label name a toolgate metric may carry: each takes its values from a closed set (or the
 * deployment's consumer groups, topics and partitions). Shared by the metrics unit test and the executor's /metrics
 * integration test, so a new label is allowed in one place.
 */
export const ALLOWED_LABELS: ReadonlySet<string> = new Set([
  'tool',
  'outcome',
  'stage',
  'decision',
  'result',
  'reason',
  'status',
  'direction',
  'downstream',
  'state',
  'group',
  'topic',
  'partition',
  'source',
  'le',
]);
