import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from './private-address';

/** Why a guarded fetch did not return a body: the message names the reason, never the body. */
export class OutboundFetchError extends Error {}

export interface GuardedFetchOptions {
  /** Bytes of body read at most; a longer answer is an error. */
  maxBytes: number;
  /** Whole request, connect to last byte. */
  timeoutMs: number;
  /** Local stacks and tests only: allows http and private, loopback and link-local targets. */
  allowPrivate: boolean;
  headers?: Record<string, string>;
}

export interface GuardedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A DNS lookup that checks every address a name resolves to and hands the socket only those:
 * the connection goes to the address that was checked, so a second, different answer (DNS
 * rebinding) never reaches it (ADR 0149).
 */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family, hints: options.hints }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) {
        return callback(new OutboundFetchError(`${hostname} resolves to a private, loopback or link-local address`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

const asFetchError = (err: Error) => (err instanceof OutboundFetchError ? err : new OutboundFetchError(`could not be fetched (${(err as NodeJS.ErrnoException).code ?? err.message})`));

/**
 * GET of a user-supplied URL with the SSRF guard (ADR 0149): https only, no private targets
 * (literal or resolved), no redirects followed, bounded in time and size. Shared by every
 * outbound call whose URL comes from outside (OAuth client metadata documents; webhooks).
 */
export function guardedFetch(target: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.reject(new OutboundFetchError('not an absolute URL'));
  }
  const allowed = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) return Promise.reject(new OutboundFetchError('must use https'));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // Node connects to a literal address without calling lookup: check it here.
  if (isIP(host) && !options.allowPrivate && isPrivateAddress(host)) return Promise.reject(new OutboundFetchError('targets a private, loopback or link-local address'));

  return new Promise((resolve, reject) => {
    // The first outcome wins: a body cut short by a limit must never be resolved as complete.
    const fail = (err: Error) => {
      reject(asFetchError(err));
      req.destroy();
    };
    const tooLarge = () => fail(new OutboundFetchError(`answer larger than ${options.maxBytes} bytes`));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(url, { method: 'GET', headers: options.headers, lookup: checkedLookup(options.allowPrivate), agent: false }, (res) => {
      if (Number(res.headers['content-length']) > options.maxBytes) return tooLarge();
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return tooLarge();
        chunks.push(chunk);
      });
      res.on('end', () => size <= options.maxBytes && resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    const timer = setTimeout(() => fail(new OutboundFetchError(`no complete answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', fail);
    req.on('close', () => clearTimeout(timer));
    req.end();
  });
}
