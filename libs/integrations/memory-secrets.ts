import { Secret } from './secret.js';
import type { SecretsSource } from './secrets-source.js';

/**
 * An in-process {@link SecretsSource} for tests and the embedded mode. `set` replaces a value (a
 * rotation) and `delete` removes it; readers see the change on their next `get`.
 */
export class MemorySecretsSource implements SecretsSource {
  readonly #values = new Map<string, string>();

  constructor(initial: Readonly<Record<string, string>> = {}) {
    for (const [name, value] of Object.entries(initial)) this.#values.set(name, value);
  }

  async get(name: string): Promise<Secret | undefined> {
    const value = this.#values.get(name);
    return value === undefined ? undefined : new Secret(value);
  }

  set(name: string, value: string): void {
    this.#values.set(name, value);
  }

  delete(name: string): void {
    this.#values.delete(name);
  }
}
