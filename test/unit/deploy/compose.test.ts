import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  APICURIO_VERSION,
  DEFAULT_KAFKA_CONTROLLER_PORT,
  DEFAULT_KAFKA_PORT,
  DEFAULT_POSTGRES_PORT,
  DEFAULT_REDIS_PORT,
  DEFAULT_SCHEMA_REGISTRY_PORT,
  KAFKA_VERSION,
} from '../../../deploy/local/config.js';
import { loadAuditSinkConfig } from '../../../services/audit-sink/config.js';
import { loadExecutorConfig } from '../../../services/executor/config.js';
import { loadReconcilerConfig } from '../../../services/reconciler/config.js';

interface Service {
  image: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  ports?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
}

const root = new URL('../../../', import.meta.url);
const text = readFileSync(new URL('docker-compose.yml', root), 'utf8');
// Merge keys (`<<: *executor`) as docker compose reads them.
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };

/** Host side of a "host:container" mapping: `{ variable, port }` for `${VAR:-1234}:...`. */
function hostPort(mapping: string): { variable?: string; port: number; container: number } {
  const withVar = /^\$\{(\w+):-(\d+)\}:(\d+)$/.exec(mapping);
  if (withVar) return { variable: withVar[1]!, port: Number(withVar[2]), container: Number(withVar[3]) };
  const plain = /^(\d+):(\d+)$/.exec(mapping);
  if (!plain) throw new Error(`unexpected port mapping ${mapping}`);
  return { port: Number(plain[1]), container: Number(plain[2]) };
}

function service(name: string): Service {
  const s = compose.services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
}

describe('docker-compose.yml', () => {
  it('defines the services the project runs', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'audit-sink',
        'executor-1',
        'executor-2',
        'grafana',
        'kafka',
        'postgres',
        'prometheus',
        'reconciler',
        'redis',
        'schema-registry',
      ].sort(),
    );
  });

  it('publishes Kafka on the launcher port under the launcher variable, same release', () => {
    const kafka = service('kafka');
    expect(kafka.image).toBe(`apache/kafka:${KAFKA_VERSION}`);
    expect(kafka.ports?.map(hostPort)).toEqual([
      { variable: 'KAFKA_PORT', port: DEFAULT_KAFKA_PORT, container: DEFAULT_KAFKA_PORT },
    ]);
    const env = kafka.environment ?? {};
    expect(String(env.KAFKA_ADVERTISED_LISTENERS)).toContain(
      `PLAINTEXT://127.0.0.1:\${KAFKA_PORT:-${DEFAULT_KAFKA_PORT}}`,
    );
    expect(String(env.KAFKA_LISTENERS)).toContain(`CONTROLLER://:${DEFAULT_KAFKA_CONTROLLER_PORT}`);
    expect(String(env.KAFKA_CONTROLLER_QUORUM_VOTERS)).toBe(`1@localhost:${DEFAULT_KAFKA_CONTROLLER_PORT}`);
  });

  it('publishes the registry on the launcher port under the launcher variable, same release', () => {
    const registry = service('schema-registry');
    expect(registry.image).toBe(`apicurio/apicurio-registry:${APICURIO_VERSION}`);
    expect(registry.ports?.map(hostPort)).toEqual([
      { variable: 'SCHEMA_REGISTRY_PORT', port: DEFAULT_SCHEMA_REGISTRY_PORT, container: 8080 },
    ]);
  });

  it('publishes Postgres and Redis on the ports the tests use by default', () => {
    expect(service('postgres').ports?.map(hostPort)).toEqual([
      { port: DEFAULT_POSTGRES_PORT, container: 5432 },
    ]);
    expect(service('redis').ports?.map(hostPort)).toEqual([{ port: DEFAULT_REDIS_PORT, container: 6379 }]);
  });

  it('reads only environment variables the launchers also read', () => {
    const used = new Set([...text.matchAll(/\$\{(\w+)/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(['KAFKA_PORT', 'SCHEMA_REGISTRY_PORT']);
  });

  it('mounts a Prometheus config that scrapes the registry service', () => {
    const mount = service('prometheus').volumes?.find((v) =>
      v.endsWith(':/etc/prometheus/prometheus.yml:ro'),
    );
    expect(mount).toBeDefined();
    const file = mount!.split(':')[0]!;
    const prom = parse(readFileSync(new URL(file, root), 'utf8')) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const targets = prom.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    expect(targets).toContain('schema-registry:9000');
  });
});

/** The file a `host:container[:ro]` volume mounts at `target`, as a URL in the repository. */
function mounted(s: Service, target: string): URL | undefined {
  const volume = s.volumes?.find((v) => v.split(':')[1] === target);
  return volume === undefined ? undefined : new URL(volume.split(':')[0]!, root);
}

const toolgateServices = {
  'executor-1': { main: 'executor', load: loadExecutorConfig },
  'executor-2': { main: 'executor', load: loadExecutorConfig },
  'audit-sink': { main: 'audit-sink', load: loadAuditSinkConfig },
  reconciler: { main: 'reconciler', load: loadReconcilerConfig },
} as const;

describe('docker-compose.yml: toolgate services', () => {
  for (const [name, { main, load }] of Object.entries(toolgateServices)) {
    it(`${name} runs the built ${main} from the one toolgate image with the environment its config.ts needs`, () => {
      const s = service(name);
      expect(s.image).toBe('toolgate:0.1.0');
      expect(s.command).toEqual(['node', `dist/services/${main}/main.js`]);
      const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
      const readFile = (path: string): string => {
        const file = mounted(s, path);
        if (file === undefined) throw Object.assign(new Error(`not mounted: ${path}`), { code: 'ENOENT' });
        return readFileSync(file, 'utf8');
      };
      expect(() => load(env, readFile)).not.toThrow();
      expect(env.HTTP_PORT).toBe('9464');
    });
  }

  it('builds the image once, from deploy/docker/Dockerfile, with instance ids unique per service', () => {
    const builders = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
    expect(builders.map(([n]) => n).sort()).toEqual(['executor-1', 'executor-2']);
    for (const [, s] of builders)
      expect(s.build).toEqual({ context: '.', dockerfile: 'deploy/docker/Dockerfile' });
    expect(existsSync(new URL('deploy/docker/Dockerfile', root))).toBe(true);
    const ids = ['executor-1', 'executor-2'].map((n) => service(n).environment?.EXECUTOR_ID);
    expect(new Set(ids).size).toBe(2);
  });

  it('has Prometheus scrape every toolgate service on its HTTP_PORT and load the rules it mounts', () => {
    const prometheus = service('prometheus');
    const config = parse(readFileSync(mounted(prometheus, '/etc/prometheus/prometheus.yml')!, 'utf8')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const targets = config.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    for (const [name, s] of Object.entries(toolgateServices)) {
      expect(targets, name).toContain(`${name}:${service(name).environment?.HTTP_PORT}`);
      expect(s.main).toBeTruthy();
    }
    expect(config.rule_files.length).toBeGreaterThan(0);
    for (const rules of config.rule_files) {
      const file = mounted(prometheus, rules);
      expect(file, rules).toBeDefined();
      expect(existsSync(file!)).toBe(true);
    }
  });

  it('provisions Grafana with the datasource and the dashboards folder the provider reads', () => {
    const grafana = service('grafana');
    const datasources = mounted(grafana, '/etc/grafana/provisioning/datasources');
    const providers = mounted(grafana, '/etc/grafana/provisioning/dashboards');
    expect(existsSync(new URL('prometheus.yml', `${datasources!.href}/`))).toBe(true);
    const provider = parse(readFileSync(new URL('toolgate.yml', `${providers!.href}/`), 'utf8')) as {
      providers: { options: { path: string } }[];
    };
    const path = provider.providers[0]!.options.path;
    const dashboards = mounted(grafana, path);
    expect(dashboards?.href.endsWith('deploy/grafana/dashboards')).toBe(true);
    expect(existsSync(new URL('toolgate-overview.json', `${dashboards!.href}/`))).toBe(true);
  });
});
