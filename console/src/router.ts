// Hash routing: `#/datasources`, `#/datasource/<id>`, `#/tasks`, `#/task/<id>`, `#/settings`, `#/dnc`, `#/signin`.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  name: string;
  id?: string;
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [pathPart, queryPart = ''] = raw.split('?', 2);
  const segments = pathPart.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
  const query = new URLSearchParams(queryPart);
  if (segments.length === 0) return { name: 'datasources', query };
  return { name: segments[0], id: segments[1], query };
}

export function useRoute(): Route {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return parseHash(hash);
}

export function navigate(hash: string, replace = false): void {
  if (replace) {
    window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}${hash}`);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  } else {
    window.location.hash = hash;
  }
}
