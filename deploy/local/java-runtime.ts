import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A JDK or JRE found on this machine. */
export interface JavaRuntime {
  readonly home: string;
  readonly bin: string;
  /** Feature release, e.g. 17 or 25. */
  readonly major: number;
}

const JVM_ROOT = '/usr/lib/jvm';

/**
 * Finds a Java runtime of at least `minMajor`. Tries `preferredHome` (JAVA_HOME), then the `java`
 * on PATH, then every JDK under /usr/lib/jvm from the lowest release up, so a server runs on the
 * oldest release it supports (the most tested one). Throws, listing what it saw, when none fits.
 */
export function findJava(minMajor: number, preferredHome?: string): JavaRuntime {
  const seen: JavaRuntime[] = [];
  for (const home of [preferredHome, homeOfPathJava()]) {
    const rt = home === undefined ? undefined : describeHome(home);
    if (!rt) continue;
    if (rt.major >= minMajor) return rt;
    seen.push(rt);
  }
  const installed = jvmRootHomes()
    .map(describeHome)
    .filter((r): r is JavaRuntime => r !== undefined);
  seen.push(...installed);
  const fit = installed.filter((r) => r.major >= minMajor).sort((a, b) => a.major - b.major)[0];
  if (fit) return fit;
  const list = [...new Set(seen.map((s) => `${s.home} (${s.major})`))].join(', ') || 'none';
  throw new Error(
    `No Java ${minMajor}+ runtime found (seen: ${list}). Install one under ${JVM_ROOT} or set JAVA_HOME.`,
  );
}

function homeOfPathJava(): string | undefined {
  try {
    const path = execFileSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' }).trim();
    if (!path) return undefined;
    return dirname(dirname(realpathSync(path)));
  } catch {
    return undefined;
  }
}

function jvmRootHomes(): string[] {
  if (!existsSync(JVM_ROOT)) return [];
  return readdirSync(JVM_ROOT)
    .map((name) => join(JVM_ROOT, name))
    .sort();
}

function describeHome(home: string): JavaRuntime | undefined {
  let real: string;
  try {
    real = realpathSync(home);
  } catch {
    return undefined;
  }
  const bin = join(real, 'bin', 'java');
  const release = join(real, 'release');
  if (!existsSync(bin) || !existsSync(release)) return undefined;
  const match = /^JAVA_VERSION="(\d+)(?:\.(\d+))?/m.exec(readFileSync(release, 'utf8'));
  if (!match?.[1]) return undefined;
  // Releases before 9 report "1.8.0_x": the feature number is the second part.
  const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
  return { home: real, bin, major };
}
