import { readFileSync } from 'node:fs';
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

interface Service {
  image: string;
  ports?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
}

const root = new URL('../../../', import.meta.url);
const text = readFileSync(new URL('docker-compose.yml', root), 'utf8');
const compose = parse(text) as { services: Record<string, Service> };

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
      ['grafana', 'kafka', 'postgres', 'prometheus', 'redis', 'schema-registry'].sort(),
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
