import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalServersConfig } from './config.js';
import { registryCcompatUrl } from './config.js';
import { findJava } from './java-runtime.js';
import type { LauncherLog } from './log.js';
import type { ManagedServer, UpResult } from './managed-server.js';
import { acquireServer, releaseServer } from './shared-server.js';
import { ensureApicurio } from './registry-install.js';
import { registryAnswers } from './registry-probe.js';

/**
 * The local schema registry as a {@link ManagedServer}: Apicurio Registry with its default
 * in-memory H2 storage (state ends with the process), HTTP on 127.0.0.1, the Confluent-compatible
 * API under /apis/ccompat/v7. Apicurio's global compatibility default is NONE (Confluent's is
 * BACKWARD); a subject gets BACKWARD by `PUT /config/<subject>`, which @kafkajs/confluent-schema-registry
 * does on a subject's first registration.
 */
export function registryServer(cfg: LocalServersConfig): ManagedServer {
  const r = cfg.registry;
  const runDir = join(cfg.cacheDir, 'run', `registry-${r.port}`);
  const ccompat = registryCcompatUrl(r);
  return {
    name: 'schema registry',
    marker: `-Dtoolgate.server=registry-${r.port}`,
    runDir,
    pidFile: join(runDir, 'registry.pid'),
    logFile: join(runDir, 'registry.log'),
    address: ccompat,
    host: r.host,
    ports: [r.port],
    portVariables: ['SCHEMA_REGISTRY_PORT'],
    answers: () => registryAnswers(ccompat),
    async prepare(log) {
      const home = await ensureApicurio(cfg.cacheDir, cfg.mavenCommand, r, log);
      const java = findJava(r.minJava, cfg.javaHome);
      const tmp = join(runDir, 'tmp');
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      rmSync(join(runDir, 'registry.log'), { force: true });
      log(`schema registry: apicurio ${r.version} on java ${java.major} (${java.home})`);
      return {
        command: java.bin,
        args: [
          `-Xmx${r.heap}`,
          '-XX:+ExitOnOutOfMemoryError',
          `-Djava.io.tmpdir=${tmp}`,
          `-Dtoolgate.server=registry-${r.port}`,
          `-Dquarkus.http.host=${r.host}`,
          `-Dquarkus.http.port=${r.port}`,
          // The management interface (health, metrics) is built in; a random loopback port keeps it
          // off 9000, which other tools on a developer machine often hold.
          `-Dquarkus.management.host=${r.host}`,
          '-Dquarkus.management.port=0',
          // Twenty pooled H2 connections by default: pointless for one in-memory database.
          '-Dapicurio.datasource.jdbc.initial-size=2',
          '-Dapicurio.datasource.jdbc.min-size=2',
          '-Dapicurio.datasource.jdbc.max-size=20',
          `-Dapicurio.storage.snapshot.location=${tmp}`,
          `-Dapicurio.import.work-dir=${tmp}`,
          '-jar',
          join(home, 'quarkus-run.jar'),
        ],
        cwd: runDir,
        logFile: join(runDir, 'registry.log'),
      };
    },
  };
}

/**
 * For test runs: ensures the local registry runs (starting it, or reusing one that answers) and
 * takes a lease on it; resolves with the Confluent-compatible base URL. First use fetches and
 * unpacks the ~160 MB archive with Maven.
 */
export async function acquireRegistry(
  cfg: LocalServersConfig,
  log: LauncherLog,
): Promise<UpResult & { readonly url: string }> {
  const result = await acquireServer(registryServer(cfg), cfg.startTimeoutMs, log);
  return { ...result, url: registryCcompatUrl(cfg.registry) };
}

/**
 * Drops this process's lease; stops the registry when it was the last one, a test run started it,
 * and `keep` is false. Resolves with whether it stopped it.
 */
export function releaseRegistry(cfg: LocalServersConfig, keep: boolean, log: LauncherLog): Promise<boolean> {
  return releaseServer(registryServer(cfg), keep, log);
}
