import { useState } from 'preact/hooks';
import type { AppConfig } from '../config';
import { setToken, startCognitoSignIn } from '../auth/session';
import { usePageTitle } from '../components/hooks';

export function SignIn(props: { config: AppConfig; notice: string | null; onSignedIn: () => void }) {
  usePageTitle('Sign in');
  const [token, setTokenText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const cognito = props.config.auth.mode === 'cognito';

  function submit(e: Event) {
    e.preventDefault();
    const value = token.trim();
    if (!value) {
      setError('Paste a development token first.');
      return;
    }
    setToken(value);
    props.onSignedIn();
  }

  return (
    <section class="signin">
      <h1>Sign in</h1>
      {props.notice && (
        <div role="alert" class="alert">
          {props.notice}
        </div>
      )}
      {props.config.auth.mode === 'none' ? (
        <p>
          This console has no way to sign in: its <code>config.json</code> is missing or names no sign-in. Deploy it
          with <code>scripts/deploy_console.sh</code>, or open it from the local API server (<code>make run</code>).
        </p>
      ) : cognito ? (
        <>
          <p>Sign in with your organisation account.</p>
          <button type="button" onClick={() => void startCognitoSignIn(props.config)}>
            Sign in
          </button>
        </>
      ) : (
        <form onSubmit={submit} class="stack">
          <p>
            Local mode: paste the development token the local API server printed (<code>make token</code>).
          </p>
          <label for="dev-token">Development token</label>
          <textarea
            id="dev-token"
            rows={4}
            value={token}
            onInput={(e) => setTokenText((e.target as HTMLTextAreaElement).value)}
            aria-describedby={error ? 'dev-token-error' : undefined}
          />
          {error && (
            <p id="dev-token-error" role="alert" class="alert">
              {error}
            </p>
          )}
          <div>
            <button type="submit">Sign in</button>
          </div>
        </form>
      )}
    </section>
  );
}
