import { describe, expect, it } from 'vitest';
import { findJava } from '../../../deploy/local/java-runtime.js';

describe('findJava', () => {
  it('finds a runtime of at least the requested release on this machine', () => {
    const rt = findJava(17);
    expect(rt.major).toBeGreaterThanOrEqual(17);
    expect(rt.bin.endsWith('/bin/java')).toBe(true);
  });

  it('skips a preferred JAVA_HOME that is too old instead of failing later in the JVM', () => {
    const old = findJava(17);
    const rt = findJava(old.major + 1, old.home);
    expect(rt.major).toBeGreaterThan(old.major);
  });

  it('names what it saw when nothing is new enough', () => {
    expect(() => findJava(999)).toThrow(/No Java 999\+ runtime found \(seen: .+\)/);
  });
});
