/**
 * True when the Confluent-compatible API at `ccompatUrl` lists subjects (HTTP 200 with a JSON
 * array). One attempt with a 2 s timeout: meant to be polled.
 */
export async function registryAnswers(ccompatUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${ccompatUrl}/subjects`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return false;
    return Array.isArray(await res.json());
  } catch {
    return false;
  }
}
