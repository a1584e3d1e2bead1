import type { EventKind } from './contracts.js';

/** Topic names per event kind. A prefix lets several deployments (or tests) share one cluster. */
export type TopicNames = Readonly<Record<EventKind, string>>;

/** `toolgate.calls`, `toolgate.results`, `toolgate.audit`, `toolgate.dlq` under the given prefix. */
export function topicNames(prefix = 'toolgate'): TopicNames {
  return {
    calls: `${prefix}.calls`,
    results: `${prefix}.results`,
    audit: `${prefix}.audit`,
    dlq: `${prefix}.dlq`,
  };
}

/** The schema-registry subject for a topic's values (TopicNameStrategy). */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}
