/** What the admin API answers to a create: the entity and, for tokens, the secret shown once. */
export type Created = { entity: { id: string; uid?: string }; metadata?: { token?: string } };

/** The operator API of a gateway started by the test, with the test's admin token; a non-2xx answer throws. */
export function adminApi(base: string) {
  return async function admin(method: string, path: string, body?: unknown): Promise<Created> {
    const res = await fetch(`${base}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${process.env.MELD_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} /admin/v1${path} answered ${res.status}: ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as Created;
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Calls a gateway started by the test with a bearer token; answers the status and the parsed body (never throws on a status). */
export function bearerApi(base: string) {
  return async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}
