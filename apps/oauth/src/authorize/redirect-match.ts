/** `http://<loopback IP literal>[:port]<rest>`, split so the port can be left out of the comparison. */
const LOOPBACK_IP = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/s;

function loopbackParts(uri: string): { host: string; rest: string } | null {
  const match = LOOPBACK_IP.exec(uri);
  if (!match || (match[2] !== undefined && Number(match[2]) > 65535)) return null;
  return { host: match[1], rest: match[3] ?? '' };
}

/**
 * Whether an authorization request's redirect URI is one the client registered: the exact
 * string, or for a loopback IP literal over http the exact string but for the port (OAuth 2.1
 * §2.3.1, RFC 8252 §7.3: a native app listens on whatever port the system gives it; ADR 0142).
 * `localhost` is a name, not a literal, so its port is matched exactly like any other host.
 */
export function isRegisteredRedirect(registered: readonly string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  const parts = loopbackParts(asked);
  if (!parts) return false;
  return registered.some((uri) => {
    const own = loopbackParts(uri);
    return own !== null && own.host === parts.host && own.rest === parts.rest;
  });
}
