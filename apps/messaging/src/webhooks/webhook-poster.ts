import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { guardedLookup, hostOf, isPrivateAddress, PrivateTargetRefused } from './webhook-target';

export interface PostResult {
  ok: boolean;
  statusCode?: number;
  error?: string;
}

/** The attempt's deadline passed (the name `AbortSignal.timeout` gives its reason). */
class AttemptTimeout extends Error {
  override name = 'TimeoutError';
}

export interface PosterOptions {
  allowPrivate: boolean;
  timeoutMs: number;
}

/**
 * One POST of a signed delivery report. Keep-alive sockets per origin; the whole attempt
 * (connect, headers, body) is bounded by the timeout; only a 2xx counts as delivered. Private
 * and loopback targets are refused before connecting (literal addresses) or when resolving
 * (names, ADR 0156), unless the operator allows them.
 */
export class WebhookPoster {
  private readonly agent: Agent;

  constructor(private readonly options: PosterOptions) {
    this.agent = new Agent({
      connections: 16,
      connectTimeout: options.timeoutMs,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.allowPrivate ? {} : { connect: { lookup: guardedLookup } }),
    });
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { ok: false, error: 'the webhook URL is not a URL' };
    }
    const host = hostOf(target);
    if (!this.options.allowPrivate && isIP(host) && isPrivateAddress(host)) return { ok: false, error: new PrivateTargetRefused(host).message };
    // The deadline's timer ends with the attempt (ADR 0317): `AbortSignal.timeout` left one per
    // attempt to fire after the attempt was over, building a DOMException and an abort event for
    // no listener, three times per message.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new AttemptTimeout()), this.options.timeoutMs);
    try {
      const res = await request(target, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', 'user-agent': 'Meld-Webhooks/1', ...headers },
        body,
        signal: deadline.signal,
      });
      // The answer's body means nothing to us; reading it frees the socket for the next delivery.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return ok ? { ok, statusCode: res.statusCode } : { ok, statusCode: res.statusCode, error: `answered ${res.statusCode}` };
    } catch (err) {
      const cause = (err as { cause?: Error }).cause;
      const reason = cause instanceof PrivateTargetRefused ? cause : (err as Error);
      return { ok: false, error: reason.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : reason.message };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
