/**
 * The two Confluent-compatible calls the smoke tests make directly (the client library has no
 * call to read a subject's versions, and sets a subject's compatibility only on first registration).
 */
const JSON_TYPE = 'application/vnd.schemaregistry.v1+json';

/** PUT /config/<subject>: sets the subject's compatibility level; rejects on a non-2xx answer. */
export async function setSubjectCompatibility(
  baseUrl: string,
  subject: string,
  level: string,
): Promise<void> {
  const res = await fetch(`${baseUrl}/config/${encodeURIComponent(subject)}`, {
    method: 'PUT',
    headers: { 'content-type': JSON_TYPE },
    body: JSON.stringify({ compatibility: level }),
  });
  if (!res.ok) throw new Error(`PUT config ${subject}: ${res.status} ${await res.text()}`);
}

/** GET /config/<subject>: the subject's own compatibility level. */
export async function subjectCompatibility(baseUrl: string, subject: string): Promise<string> {
  const res = await fetch(`${baseUrl}/config/${encodeURIComponent(subject)}`);
  if (!res.ok) throw new Error(`GET config ${subject}: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { compatibilityLevel: string };
  return body.compatibilityLevel;
}

/** GET /subjects/<subject>/versions: the registered version numbers. */
export async function subjectVersions(baseUrl: string, subject: string): Promise<number[]> {
  const res = await fetch(`${baseUrl}/subjects/${encodeURIComponent(subject)}/versions`);
  if (!res.ok) throw new Error(`GET versions ${subject}: ${res.status} ${await res.text()}`);
  return (await res.json()) as number[];
}
