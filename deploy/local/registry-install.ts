import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureCacheDir } from './cache-dir.js';
import type { RegistrySettings } from './config.js';
import type { LauncherLog } from './log.js';
import { copyArtifact } from './maven-fetch.js';

const run = promisify(execFile);

/**
 * Ensures Apicurio Registry's `all` archive (a Quarkus fast-jar: quarkus-run.jar plus lib/, app/,
 * quarkus/) is unpacked in `<cacheDir>/apicurio-registry-<version>`; returns that folder. The
 * archive itself is deleted after unpacking (Maven's repository keeps a copy).
 */
export async function ensureApicurio(
  cacheDir: string,
  mvn: string,
  registry: RegistrySettings,
  log: LauncherLog,
): Promise<string> {
  const dir = join(cacheDir, `apicurio-registry-${registry.version}`);
  await ensureCacheDir(
    dir,
    `apicurio registry ${registry.version}`,
    async (tmp) => {
      const archive = await copyArtifact(mvn, tmp, {
        groupId: 'io.apicurio',
        artifactId: 'apicurio-registry-app',
        version: registry.version,
        type: 'tar.gz',
        classifier: 'all',
      });
      await run('tar', ['-xzf', archive, '-C', tmp]);
      rmSync(archive);
      if (!existsSync(join(tmp, 'quarkus-run.jar'))) {
        throw new Error(`apicurio archive ${archive} has no quarkus-run.jar`);
      }
    },
    log,
  );
  return dir;
}
