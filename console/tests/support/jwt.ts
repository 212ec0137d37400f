// Tokens for tests: unsigned-looking JWTs whose payload the console decodes for display only
// (the API verifies signatures; the console never does).

/** A JWT with `payload`, base64url encoded, and a placeholder signature. */
export function jwt(payload: unknown): string {
  const encode = (value: unknown) =>
    Buffer.from(JSON.stringify(value)).toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(payload)}.c2lnbmF0dXJl`;
}
