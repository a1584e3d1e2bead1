/** `{ [key]: value }`, or `{}` when value is undefined, for building option objects field by field. */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
