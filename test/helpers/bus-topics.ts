import type { EventKind } from '../../libs/events/contracts.js';
import type { TopicNames } from '../../libs/events/topics.js';
import type { TopicSpec } from '../../libs/ports/event-bus.js';

/** The specs of the four toolgate topics named in `topics`, each with its count in `partitions`. */
export function topicSpecs(topics: TopicNames, partitions: Readonly<Record<EventKind, number>>): TopicSpec[] {
  return (Object.keys(topics) as EventKind[]).map((kind) => ({
    topic: topics[kind],
    partitions: partitions[kind],
  }));
}
