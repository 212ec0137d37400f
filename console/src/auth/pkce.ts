// PKCE (RFC 7636) for the Cognito hosted UI: a random verifier and its S256 challenge.

export const VERIFIER_CHARSET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';

/** A code verifier of `length` (43-128) unreserved characters, drawn without modulo bias. */
export function createVerifier(length = 64): string {
  if (length < 43 || length > 128) throw new RangeError('PKCE verifier length must be 43-128');
  const n = VERIFIER_CHARSET.length; // 66
  const limit = 256 - (256 % n); // reject bytes >= limit
  let out = '';
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < limit) out += VERIFIER_CHARSET[b % n];
      if (out.length === length) break;
    }
  }
  return out;
}

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** BASE64URL(SHA256(ASCII(verifier))). */
export async function challengeS256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** An opaque value for the `state` parameter. */
export function randomState(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(16)));
}
