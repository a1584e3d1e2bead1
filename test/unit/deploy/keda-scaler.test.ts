import { describe, expect, it } from 'vitest';
import { topicNames } from '../../../libs/events/topics.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { K8S_RESOURCES, named, type Container as K8sContainer, type Resource } from './k8s-resources.js';

/**
 * The executors' KEDA trigger must watch what the executors use: brokers, consumer group and calls
 * topic all come from the executor container's environment (KEDA's `*FromEnv` metadata), never
 * from literals a cluster operator would have to keep in step with toolgate-config by hand.
 */

/** What KEDA reads of a container: its name and environment. */
type Container = Pick<K8sContainer, 'name' | 'envFrom' | 'env'>;

interface ScaledObjectSpec {
  scaleTargetRef: { name: string; envSourceContainerName?: string };
  triggers: { type: string; metadata: Record<string, string> }[];
}

const resources = K8S_RESOURCES;

/** The scale target's container KEDA reads the environment of (envSourceContainerName, else the first). */
function sourceContainer(scaled: ScaledObjectSpec, from: readonly Resource[]): Container {
  const deployment = named('Deployment', scaled.scaleTargetRef.name, from);
  const containers = (deployment.spec as { template: { spec: { containers: Container[] } } }).template.spec
    .containers;
  const wanted = scaled.scaleTargetRef.envSourceContainerName;
  const container = wanted === undefined ? containers[0] : containers.find((c) => c.name === wanted);
  if (!container) throw new Error(`no container ${wanted ?? '(first)'} in ${scaled.scaleTargetRef.name}`);
  return container;
}

/**
 * The environment as KEDA's resolver builds it (and the kubelet, for these sources): envFrom
 * ConfigMaps and Secrets in order, then env entries, whose `$(NAME)` references expand to the
 * variables defined before them (an unknown reference stays as written, `$$` escapes).
 */
function resolvedEnv(container: Container, from: readonly Resource[], pod = 'pod-0'): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, named('ConfigMap', source.configMapRef.name, from).data);
    if (source.secretRef) Object.assign(env, named('Secret', source.secretRef.name, from).stringData);
  }
  for (const v of container.env ?? []) {
    if (v.value !== undefined) {
      env[v.name] = v.value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (ref, key: string | undefined) =>
        key === undefined ? '$' : (env[key] ?? ref),
      );
    } else if (v.valueFrom?.fieldRef?.fieldPath === 'metadata.name') {
      env[v.name] = pod;
    } else if (v.valueFrom?.configMapKeyRef) {
      const { name, key } = v.valueFrom.configMapKeyRef;
      env[v.name] = named('ConfigMap', name, from).data?.[key] ?? '';
    }
  }
  return env;
}

/** What the kafka trigger would watch: its `*FromEnv` values resolved, or its literals. */
function watched(from: readonly Resource[]): { brokers: string; group: string; topic: string } {
  const scaled = named('ScaledObject', 'toolgate-executor', from).spec as unknown as ScaledObjectSpec;
  const kafka = scaled.triggers.find((t) => t.type === 'kafka');
  if (!kafka) throw new Error('no kafka trigger');
  const env = resolvedEnv(sourceContainer(scaled, from), from);
  const read = (field: string): string => {
    const variable = kafka.metadata[`${field}FromEnv`];
    const value = variable === undefined ? kafka.metadata[field] : env[variable];
    if (value === undefined || value === '') throw new Error(`kafka trigger: no ${field}`);
    return value;
  };
  return { brokers: read('bootstrapServers'), group: read('consumerGroup'), topic: read('topic') };
}

/** The executor's own configuration, parsed from the same container's environment. */
function executorConfig(from: readonly Resource[]) {
  const scaled = named('ScaledObject', 'toolgate-executor', from).spec as unknown as ScaledObjectSpec;
  const jwks = named('ConfigMap', 'toolgate-principal-keys', from).data!['jwks.json']!;
  return loadExecutorConfig(resolvedEnv(sourceContainer(scaled, from), from), () => jwks);
}

/** A copy of the manifests with toolgate-config's data changed. */
function withConfig(patch: Record<string, string>): Resource[] {
  return resources.map((r) =>
    r.kind === 'ConfigMap' && r.metadata.name === 'toolgate-config'
      ? { ...r, data: { ...r.data, ...patch } }
      : r,
  );
}

describe("the executors' KEDA trigger", () => {
  it('names no broker, group or topic itself: all three come from the pod environment', () => {
    const scaled = named('ScaledObject', 'toolgate-executor').spec as unknown as ScaledObjectSpec;
    const metadata = scaled.triggers.find((t) => t.type === 'kafka')!.metadata;
    for (const literal of ['bootstrapServers', 'brokerList', 'consumerGroup', 'topic']) {
      expect(metadata, literal).not.toHaveProperty(literal);
    }
    expect(metadata).toMatchObject({
      bootstrapServersFromEnv: 'KAFKA_BROKERS',
      consumerGroupFromEnv: 'TOOLGATE_GROUP_ID',
      topicFromEnv: 'TOOLGATE_CALLS_TOPIC',
    });
    // KAFKA_BROKERS is the shared ConfigMap key the executor reads, not a copy in the Deployment.
    expect(named('ConfigMap', 'toolgate-config').data).toHaveProperty('KAFKA_BROKERS');
    const container = sourceContainer(scaled, resources);
    expect(container.name).toBe('executor');
    expect((container.env ?? []).map((v) => v.name)).not.toContain('KAFKA_BROKERS');
  });

  it("watches exactly the executor's brokers, consumer group and calls topic", () => {
    const config = executorConfig(resources);
    const scaler = watched(resources);
    expect(scaler.brokers.split(',')).toEqual(config.kafkaBrokers);
    expect(scaler.group).toBe(config.groupId);
    expect(scaler.topic).toBe(topicNames(config.topicPrefix).calls);
  });

  it('follows an edit of toolgate-config: new brokers and a new topic prefix reach both', () => {
    const edited = withConfig({
      KAFKA_BROKERS: 'b-1.example:9094,b-2.example:9094',
      TOOLGATE_TOPIC_PREFIX: 'acme',
    });
    const config = executorConfig(edited);
    const scaler = watched(edited);
    expect(config.kafkaBrokers).toEqual(['b-1.example:9094', 'b-2.example:9094']);
    expect(scaler.brokers).toBe('b-1.example:9094,b-2.example:9094');
    expect(config.topicPrefix).toBe('acme');
    expect(scaler.topic).toBe('acme.calls');
    expect(scaler.topic).toBe(topicNames(config.topicPrefix).calls);
  });

  it('the resolver expands references as KEDA does (so the check above can fail)', () => {
    const env = resolvedEnv(
      {
        name: 'c',
        env: [
          { name: 'A', value: 'x' },
          { name: 'B', value: '$(A).calls' },
          { name: 'C', value: '$(MISSING).calls' },
          { name: 'D', value: '$$(A)' },
        ],
      },
      [],
    );
    expect(env).toEqual({ A: 'x', B: 'x.calls', C: '$(MISSING).calls', D: '$(A)' });
  });
});
