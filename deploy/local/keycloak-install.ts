import { execFile } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureCacheDir } from './cache-dir.js';
import type { KeycloakSettings } from './config.js';
import type { LauncherLog } from './log.js';
import { copyArtifact } from './maven-fetch.js';

const run = promisify(execFile);

/**
 * Ensures Keycloak's Quarkus distribution (Maven Central's `org.keycloak:keycloak-quarkus-dist`
 * zip: bin/kc.sh, lib/, conf/, themes/) is unpacked in `<cacheDir>/keycloak-<version>`; returns that
 * folder. The zip is deleted after unpacking (Maven's repository keeps a copy).
 */
export async function ensureKeycloak(
  cacheDir: string,
  mvn: string,
  keycloak: KeycloakSettings,
  log: LauncherLog,
): Promise<string> {
  const dir = join(cacheDir, `keycloak-${keycloak.version}`);
  await ensureCacheDir(
    dir,
    `keycloak ${keycloak.version}`,
    async (tmp) => {
      const archive = await copyArtifact(mvn, tmp, {
        groupId: 'org.keycloak',
        artifactId: 'keycloak-quarkus-dist',
        version: keycloak.version,
        type: 'zip',
      });
      const unpacked = join(tmp, 'unpacked');
      await run('unzip', ['-q', archive, '-d', unpacked]).catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'ENOENT'
          ? new Error("'unzip' not found: install it (e.g. 'apt-get install -y unzip') to unpack Keycloak")
          : err;
      });
      rmSync(archive);
      // The zip holds one folder, keycloak-<version>/; its contents become the cache folder's.
      const top = join(unpacked, `keycloak-${keycloak.version}`);
      if (!existsSync(join(top, 'bin', 'kc.sh'))) {
        throw new Error(`keycloak archive ${archive} has no keycloak-${keycloak.version}/bin/kc.sh`);
      }
      for (const name of readdirSync(top)) renameSync(join(top, name), join(tmp, name));
      rmSync(unpacked, { recursive: true, force: true });
    },
    log,
  );
  return dir;
}
