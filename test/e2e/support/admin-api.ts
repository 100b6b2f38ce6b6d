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
