// Runtime configuration from config.json beside index.html; missing means local mode.

export type AuthConfig =
  | { mode: 'local' }
  | { mode: 'cognito'; domain: string; clientId: string; scopes: string[] };

export interface AppConfig {
  apiBase: string;
  auth: AuthConfig;
}

export const LOCAL_CONFIG: AppConfig = { apiBase: '', auth: { mode: 'local' } };

export function parseConfig(raw: unknown): AppConfig {
  if (!raw || typeof raw !== 'object') return LOCAL_CONFIG;
  const r = raw as Record<string, unknown>;
  const apiBase = typeof r.apiBase === 'string' ? r.apiBase.replace(/\/$/, '') : '';
  const auth = r.auth as Record<string, unknown> | undefined;
  if (auth && auth.mode === 'cognito' && typeof auth.domain === 'string' && typeof auth.clientId === 'string') {
    const scopes = Array.isArray(auth.scopes) ? auth.scopes.filter((s): s is string => typeof s === 'string') : ['openid'];
    return { apiBase, auth: { mode: 'cognito', domain: auth.domain.replace(/\/$/, ''), clientId: auth.clientId, scopes } };
  }
  return { apiBase, auth: { mode: 'local' } };
}

export async function loadConfig(): Promise<AppConfig> {
  try {
    const res = await fetch('config.json', { cache: 'no-store' });
    if (!res.ok) return LOCAL_CONFIG;
    return parseConfig(await res.json());
  } catch {
    return LOCAL_CONFIG;
  }
}
