// Who the console is signed in as: the token's payload, decoded for display only. The API
// verifies every token; nothing here decides what the person may do.

export interface Identity {
  /** The tenant claim (`tenantClaim` of config.json, default `tenant_id`). */
  tenant: string | null;
  /** The user: the token's `sub`. */
  user: string | null;
}

/** The payload of a JWT (its middle part, base64url JSON), or null when it is not one. */
export function tokenClaims(token: string): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const payload: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return payload && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The tenant and user a token names, or null when it cannot be read. */
export function identity(token: string | null, tenantClaim = 'tenant_id'): Identity | null {
  if (!token) return null;
  const claims = tokenClaims(token);
  if (!claims) return null;
  const text = (value: unknown) => (typeof value === 'string' && value ? value : null);
  return { tenant: text(claims[tenantClaim]), user: text(claims.sub) };
}
