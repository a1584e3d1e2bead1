import { inspect } from 'node:util';

const HIDDEN = '[secret]';

/**
 * A credential value that does not print itself: `String()`, template literals, `JSON.stringify`,
 * `util.inspect` (console.log, pino) all show "[secret]". The value is read only through
 * {@link Secret.reveal}, at the one place it goes on the wire, so an accidental log line, error
 * message or span attribute carries the placeholder instead.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The raw value. Call it only where the credential is sent; never keep or log the result. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return HIDDEN;
  }

  toJSON(): string {
    return HIDDEN;
  }

  [inspect.custom](): string {
    return HIDDEN;
  }
}
