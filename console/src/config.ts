// Runtime configuration from config.json beside index.html. Only a config.json that says
// `"mode":"local"` makes the console local (development tokens, `#/signin?token=`): the local
// API server serves one; a build carries none. Missing or unreadable means no sign-in at all.

export type AuthConfig =
  | { mode: 'local' }
  | { mode: 'cognito'; domain: string; clientId: string; scopes: string[] }
  | { mode: 'none' };

export interface AppConfig {
  apiBase: string;
  auth: AuthConfig;
  /** The claim that names the tenant (the API's TENANT_CLAIM); shown in the header. */
  tenantClaim: string;
}

export const DEFAULT_TENANT_CLAIM = 'tenant_id';

/** What the console runs with when config.json is missing or says nothing it understands. */
export const UNCONFIGURED: AppConfig = { apiBase: '', auth: { mode: 'none' }, tenantClaim: DEFAULT_TENANT_CLAIM };

export function parseConfig(raw: unknown): AppConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return UNCONFIGURED;
  const r = raw as Record<string, unknown>;
  const apiBase = typeof r.apiBase === 'string' ? r.apiBase.replace(/\/$/, '') : '';
  const tenantClaim = typeof r.tenantClaim === 'string' && r.tenantClaim ? r.tenantClaim : DEFAULT_TENANT_CLAIM;
  const auth = r.auth as Record<string, unknown> | undefined;
  if (auth && auth.mode === 'cognito' && typeof auth.domain === 'string' && typeof auth.clientId === 'string') {
    const scopes = Array.isArray(auth.scopes) ? auth.scopes.filter((s): s is string => typeof s === 'string') : ['openid'];
    return { apiBase, tenantClaim, auth: { mode: 'cognito', domain: auth.domain.replace(/\/$/, ''), clientId: auth.clientId, scopes } };
  }
  if (auth && auth.mode === 'local') return { apiBase, tenantClaim, auth: { mode: 'local' } };
  return { apiBase, tenantClaim, auth: { mode: 'none' } };
}

export async function loadConfig(fetchFn: typeof fetch = fetch): Promise<AppConfig> {
  try {
    const res = await fetchFn('config.json', { cache: 'no-store' });
    if (!res.ok) return UNCONFIGURED;
    return parseConfig(await res.json());
  } catch {
    return UNCONFIGURED;
  }
}
