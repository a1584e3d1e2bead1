/**
 * A deliberately small semantic-version subset: `MAJOR.MINOR.PATCH`, decimal, no leading zeros.
 * Pre-release and build suffixes are refused rather than half-supported, so ordering is total and
 * obvious: a tool version is either released or it is not registered.
 */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** A parsed version: `[major, minor, patch]`, each a safe non-negative integer. */
export type SemverTriple = readonly [major: number, minor: number, patch: number];

/** Parses `MAJOR.MINOR.PATCH`; undefined for anything else (including numbers past 2^53). */
export function parseSemver(version: string): SemverTriple | undefined {
  const m = SEMVER.exec(version);
  if (m === null) return undefined;
  const parts = [Number(m[1]), Number(m[2]), Number(m[3])] as const;
  return parts.every(Number.isSafeInteger) ? parts : undefined;
}

/** True when `version` is a `MAJOR.MINOR.PATCH` string accepted by {@link parseSemver}. */
export function isSemver(version: unknown): version is string {
  return typeof version === 'string' && parseSemver(version) !== undefined;
}

/**
 * Orders two versions: negative when `a < b`, 0 when equal, positive when `a > b`. Usable directly
 * as an `Array.prototype.sort` comparator. Throws on a string that is not `MAJOR.MINOR.PATCH`,
 * because silently ordering garbage would pick the wrong "current" version.
 */
export function compareSemver(a: string, b: string): number {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  if (pa === undefined || pb === undefined) {
    throw new TypeError(`Not a MAJOR.MINOR.PATCH version: '${pa === undefined ? a : b}'`);
  }
  return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
}
