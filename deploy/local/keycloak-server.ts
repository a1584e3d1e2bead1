import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalServersConfig } from './config.js';
import { keycloakUrl } from './config.js';
import { findJava } from './java-runtime.js';
import { ensureKeycloak } from './keycloak-install.js';
import { KEYCLOAK_REALM, keycloakRealm } from './keycloak-realm.js';
import type { LauncherLog } from './log.js';
import type { ManagedServer, UpResult } from './managed-server.js';
import { acquireServer, releaseServer, tidyServer } from './shared-server.js';

/** The issuer URL of the local realm (what the console's OPS_CONSOLE_OIDC_ISSUER names). */
export function keycloakIssuer(cfg: LocalServersConfig): string {
  return `${keycloakUrl(cfg.keycloak)}/realms/${KEYCLOAK_REALM}`;
}

/**
 * True when the realm's discovery document is served: Keycloak is up and the realm imported. One
 * attempt with a 2 s timeout: meant to be polled.
 */
export async function keycloakAnswers(issuer: string): Promise<boolean> {
  try {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`, {
      signal: AbortSignal.timeout(2000),
    });
    if (!res.ok) return false;
    return ((await res.json()) as { issuer?: unknown }).issuer === issuer;
  } catch {
    return false;
  }
}

/**
 * The local identity provider as a {@link ManagedServer}: Keycloak's Quarkus distribution in
 * development mode (`start-dev`: plain HTTP on 127.0.0.1, its H2 file database under the cache
 * folder), importing {@link keycloakRealm} at start. The database is kept between starts because
 * creating its schema is most of a cold start (about 36 s against 16 s warm on a loaded 2-core
 * machine); it is deleted when the realm definition changed, so the next start imports the new one
 * (Keycloak skips the import of a realm that exists). The management interface (health, metrics) is
 * off; readiness is the realm's discovery document. Development mode is what Keycloak documents for
 * local use; a deployment runs `kc.sh start` with a real database and TLS.
 */
export function keycloakServer(cfg: LocalServersConfig): ManagedServer {
  const k = cfg.keycloak;
  const runDir = join(cfg.cacheDir, 'run', `keycloak-${k.port}`);
  const issuer = keycloakIssuer(cfg);
  const marker = `-Dtoolgate.server=keycloak-${k.port}`;
  return {
    name: 'keycloak',
    marker,
    runDir,
    pidFile: join(runDir, 'keycloak.pid'),
    logFile: join(runDir, 'keycloak.log'),
    address: issuer,
    host: k.host,
    ports: [k.port],
    portVariables: ['TOOLGATE_KEYCLOAK_PORT'],
    answers: () => keycloakAnswers(issuer),
    async prepare(log) {
      const home = await ensureKeycloak(cfg.cacheDir, cfg.mavenCommand, k, log);
      const java = findJava(k.minJava, cfg.javaHome);
      // `--import-realm` reads <home>/data/import; the realm is this checkout's, written every start.
      const imports = join(home, 'data', 'import');
      mkdirSync(imports, { recursive: true });
      const realm = JSON.stringify(keycloakRealm(), null, 2);
      const digest = createHash('sha256').update(realm).digest('hex');
      const digestFile = join(imports, `${KEYCLOAK_REALM}.sha256`);
      if (!existsSync(digestFile) || readFileSync(digestFile, 'utf8') !== digest) {
        rmSync(join(home, 'data', 'h2'), { recursive: true, force: true });
        log('keycloak: realm definition changed (or first start): fresh database, realm imported');
      }
      writeFileSync(join(imports, `${KEYCLOAK_REALM}.json`), realm);
      writeFileSync(digestFile, digest);
      const tmp = join(runDir, 'tmp');
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      rmSync(join(runDir, 'keycloak.log'), { force: true });
      log(`keycloak: ${k.version} on java ${java.major} (${java.home})`);
      return {
        // kc.sh picks java from JAVA_HOME and adds JAVA_OPTS_APPEND; `env` passes both and execs,
        // so the pid is kc.sh's, which forwards SIGTERM to the java process it starts.
        command: 'env',
        args: [
          `JAVA_HOME=${java.home}`,
          `JAVA_OPTS_APPEND=-Xmx${k.heap} -XX:+ExitOnOutOfMemoryError -Djava.io.tmpdir=${tmp}`,
          'sh',
          join(home, 'bin', 'kc.sh'),
          marker,
          'start-dev',
          `--http-host=${k.host}`,
          `--http-port=${k.port}`,
          '--db=dev-file',
          '--import-realm',
          '--health-enabled=false',
          '--metrics-enabled=false',
        ],
        cwd: runDir,
        logFile: join(runDir, 'keycloak.log'),
      };
    },
  };
}

/**
 * For tests that need the identity provider: ensures the local Keycloak runs (starting it, or
 * reusing one that answers) and takes a lease for this process; resolves with the realm's issuer
 * URL. First use fetches and unpacks the ~170 MB distribution with Maven.
 */
export async function acquireKeycloak(
  cfg: LocalServersConfig,
  log: LauncherLog,
): Promise<UpResult & { readonly issuer: string }> {
  const result = await acquireServer(keycloakServer(cfg), cfg.startTimeoutMs, log);
  return { ...result, issuer: keycloakIssuer(cfg) };
}

/**
 * Drops this process's lease; stops Keycloak when it was the last one, a test run started it, and
 * `keep` is false. Resolves with whether it stopped it.
 */
export function releaseKeycloak(cfg: LocalServersConfig, keep: boolean, log: LauncherLog): Promise<boolean> {
  return releaseServer(keycloakServer(cfg), keep, log);
}

/**
 * For the end of a test run: stops Keycloak when a test run started it and no live process holds a
 * lease (test files take leases from their worker processes, which are gone by then).
 */
export function tidyKeycloak(cfg: LocalServersConfig, log: LauncherLog): Promise<boolean> {
  return tidyServer(keycloakServer(cfg), log);
}
