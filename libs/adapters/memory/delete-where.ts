/**
 * Deletes every entry of `map` whose value `doomed` picks (deleting while iterating a Map is safe:
 * every entry is still visited once) and returns how many it deleted.
 */
export function deleteWhere<K, V>(map: Map<K, V>, doomed: (value: V) => boolean): number {
  let deleted = 0;
  for (const [key, value] of map) {
    if (doomed(value)) {
      map.delete(key);
      deleted += 1;
    }
  }
  return deleted;
}
