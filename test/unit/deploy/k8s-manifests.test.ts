import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadAuditSinkConfig } from '../../../services/audit-sink/config.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { loadReconcilerConfig } from '../../../services/reconciler/config.js';
import { TRACE_EXPORT_ENV } from '../../../libs/observability/otel/config.js';
import { named, type Container, type Resource } from './k8s-resources.js';

const services = {
  executor: { load: loadExecutorConfig, config: 'services/executor/config.ts' },
  'audit-sink': { load: loadAuditSinkConfig, config: 'services/audit-sink/config.ts' },
  reconciler: { load: loadReconcilerConfig, config: 'services/reconciler/config.ts' },
} as const;

/**
 * The variable names a service's configuration declares: keys (`NAME:` or shorthand `NAME,`) of the
 * zod schemas in its config.ts and in the local modules config.ts imports (shared schema parts).
 */
function declaredNames(configPath: string): Set<string> {
  const file = new URL(`../../../${configPath}`, import.meta.url);
  const text = readFileSync(file, 'utf8');
  const local = [...text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)].map((m) => new URL(`${m[1]}.ts`, file));
  const texts = [text, ...local.filter((u) => existsSync(u)).map((u) => readFileSync(u, 'utf8'))];
  return new Set(texts.flatMap((t) => [...t.matchAll(/^ {2}([A-Z][A-Z0-9_]*)\s*[:,]/gm)].map((m) => m[1]!)));
}

function containerOf(deployment: Resource): Container {
  const spec = deployment.spec as { template: { spec: { containers: Container[] } } };
  expect(spec.template.spec.containers).toHaveLength(1);
  return spec.template.spec.containers[0]!;
}

/** The environment the container would see in a pod named `pod`, from its ConfigMaps and Secrets. */
function podEnv(c: Container, pod: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, named('ConfigMap', from.configMapRef.name).data);
    if (from.secretRef) Object.assign(env, named('Secret', from.secretRef.name).stringData);
  }
  for (const v of c.env ?? []) {
    if (v.value !== undefined) env[v.name] = v.value;
    else if (v.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[v.name] = pod;
    else throw new Error(`unsupported env source for ${v.name}`);
  }
  return env;
}

const mebibytes = (q: string | undefined): number => {
  const m = /^(\d+)Mi$/.exec(q ?? '');
  if (!m) throw new Error(`expected a memory quantity in Mi, got ${q}`);
  return Number(m[1]);
};

describe('Kubernetes manifests', () => {
  for (const [service, { load, config }] of Object.entries(services)) {
    describe(`toolgate-${service}`, () => {
      const deployment = named('Deployment', `toolgate-${service}`);
      const c = containerOf(deployment);

      it('runs the built service from the one toolgate image', () => {
        expect(c.image).toBe('toolgate:0.1.0');
        expect(c.command).toEqual(['node', `dist/services/${service}/main.js`]);
        expect(
          readFileSync(new URL(`../../../services/${service}/main.ts`, import.meta.url), 'utf8'),
        ).toBeTruthy();
      });

      it('probes /readyz and /healthz on the HTTP_PORT it exposes, and a Service selects it', () => {
        const env = podEnv(c, 'p');
        expect(c.ports).toEqual([{ name: 'http-metrics', containerPort: Number(env.HTTP_PORT) }]);
        expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http-metrics' });
        expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http-metrics' });
        const svc = named('Service', `toolgate-${service}-metrics`);
        expect(svc.spec?.selector).toEqual({ 'app.kubernetes.io/name': `toolgate-${service}` });
      });

      it('requests memory and caps it above the request', () => {
        const requested = mebibytes(c.resources?.requests?.memory);
        expect(requested).toBeGreaterThanOrEqual(128);
        expect(mebibytes(c.resources?.limits?.memory)).toBeGreaterThan(requested);
        expect(c.resources?.requests?.cpu).toMatch(/^\d+m$/);
      });

      it('provides every variable the service requires, each one its config.ts declares', () => {
        const env = podEnv(c, `toolgate-${service}-7d9f-abcde`);
        const jwks = named('ConfigMap', 'toolgate-principal-keys').data!['jwks.json']!;
        const mount = c.volumeMounts?.find((m) => m.name === 'principal-keys')?.mountPath;
        const readFile = (path: string): string => {
          if (mount !== undefined && path === `${mount}/jwks.json`) return jwks;
          throw Object.assign(new Error(`no such file ${path}`), { code: 'ENOENT' });
        };
        // The service's own parser: throws naming any required variable that is missing or malformed.
        expect(() => load(env, readFile)).not.toThrow();
        // Besides its config.ts: the OpenTelemetry variables (libs/observability/otel/config.ts)
        // and what the executor's KEDA trigger reads from the pod (test/unit/deploy/keda-scaler.test.ts).
        const declared = new Set([...declaredNames(config), ...TRACE_EXPORT_ENV, 'TOOLGATE_CALLS_TOPIC']);
        const ownNames = (c.env ?? []).map((v) => v.name);
        for (const name of ownNames) expect(declared.has(name), `${name} in ${config}`).toBe(true);
        expect(declared.has('HTTP_PORT'), `HTTP_PORT in ${config}`).toBe(true);
      });
    });
  }

  it('shares ConfigMap keys that every service declares or that some service reads', () => {
    const all = new Set(Object.values(services).flatMap((s) => [...declaredNames(s.config)]));
    const shared = {
      ...named('ConfigMap', 'toolgate-config').data,
      ...named('Secret', 'toolgate-secrets').stringData,
    };
    for (const name of Object.keys(shared)) expect(all.has(name), name).toBe(true);
  });

  it('scales the executors with KEDA on their own group lag on the calls topic', () => {
    const scaled = named('ScaledObject', 'toolgate-executor').spec as {
      scaleTargetRef: { name: string };
      maxReplicaCount: number;
      minReplicaCount: number;
      triggers: { type: string; metadata: Record<string, string> }[];
    };
    const env = podEnv(containerOf(named('Deployment', 'toolgate-executor')), 'p');
    expect(scaled.scaleTargetRef.name).toBe('toolgate-executor');
    const kafka = scaled.triggers.find((t) => t.type === 'kafka')!.metadata;
    // Read from the pod's environment (keda-scaler.test.ts resolves them as KEDA does).
    expect(env[kafka.consumerGroupFromEnv!]).toBe(env.TOOLGATE_GROUP_ID);
    expect(env[kafka.bootstrapServersFromEnv!]).toBe(env.KAFKA_BROKERS);
    expect(kafka.topicFromEnv).toBe('TOOLGATE_CALLS_TOPIC');
    // More members than partitions would sit idle.
    expect(scaled.maxReplicaCount).toBeLessThanOrEqual(Number(env.CALLS_PARTITIONS));
    expect(scaled.minReplicaCount).toBeGreaterThanOrEqual(2);
  });
});
