'use strict';
// The seed's one HTTP call: a JSON POST with a bearer token, retried with backoff on network
// errors, 5xx and 429 (waiting for the rate limit's reset), so a busy local stack slows the
// seed down instead of failing it.

/** POST `body` to `url`; resolves to { status, json } of the first answer that is not 429 or 5xx. */
async function postJson(url, token, body, attempt = 0) {
  let res;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30000) });
  } catch (err) {
    if (attempt >= 8) throw err;
    await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
    return postJson(url, token, body, attempt + 1);
  }
  if (res.status === 429 || res.status >= 500) {
    await res.body?.cancel();
    if (attempt >= 8) throw new Error(`${url} answered ${res.status} ${attempt + 1} times`);
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    await new Promise((r) => setTimeout(r, res.status === 429 && reset > 0 ? Math.min(reset * 1000, 60000) : 200 * 2 ** attempt));
    return postJson(url, token, body, attempt + 1);
  }
  return { status: res.status, json: await res.json().catch(() => ({})) };
}

module.exports = { postJson };
