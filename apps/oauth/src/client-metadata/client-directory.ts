import { unstorableText } from '@meld/api';
import { guardedFetch, OutboundFetchError } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import { OAUTH_CONFIG, type OAuthConfig } from '../oauth-config';
import { type ClientRow, OAuthRepository } from '../storage/oauth.repository';
import { clientIdUrlProblem, isMetadataDocumentId, readMetadataDocument } from './metadata-document';

export type ClientLookup = { client: ClientRow } | { problem: string };

/** Bounds of a document fetch (ADR 0149): the draft's recommended 5 KB, a few seconds, a bounded cache. */
export const DOCUMENT_LIMITS = { maxBytes: 5120, timeoutMs: 5000, cacheEntries: 1000, minSeconds: 60, defaultSeconds: 300, maxSeconds: 86400 };

const UNKNOWN = 'This application is not registered (unknown client_id).';

/** Seconds a document may be reused: its Cache-Control max-age, kept within the limits. */
function cacheSeconds(cacheControl: string | undefined): number {
  const maxAge = /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl ?? '')?.[1];
  const seconds = maxAge === undefined || /no-store|no-cache/i.test(cacheControl ?? '') ? DOCUMENT_LIMITS.defaultSeconds : Number(maxAge);
  return Math.min(DOCUMENT_LIMITS.maxSeconds, Math.max(DOCUMENT_LIMITS.minSeconds, seconds));
}

/**
 * Every client lookup: a registered client (RFC 7591) from Postgres, or a client_id that is the
 * https URL of its Client ID Metadata Document, fetched through the SSRF guard and cached in
 * memory (one fetch at a time per URL). A document's client is kept as a row of oauth_clients
 * too, so grants and tokens reference it like any client, and an operator's revocation of it
 * holds whatever the document says (ADR 0149).
 */
@Injectable()
export class ClientDirectory {
  /** Fetched documents by URL: null once saved as a client row, else why the document is unusable. */
  private readonly documents = new Map<string, { until: number; fetched: Promise<string | null> }>();

  constructor(
    private readonly repo: OAuthRepository,
    @Inject(OAUTH_CONFIG) private readonly config: OAuthConfig,
  ) {}

  async lookup(clientId: string): Promise<ClientLookup> {
    // No client has an id Postgres cannot hold (U+0000): unknown, not the error filter's JSON at a browser's page.
    if (unstorableText(clientId)) return { problem: UNKNOWN };
    if (isMetadataDocumentId(clientId)) {
      const problem = await this.document(clientId);
      if (problem) return { problem: `The application's metadata document (its client_id URL) ${problem}.` };
    }
    // Read every time, so an operator's revocation holds within the document's cache time.
    const client = await this.repo.client(clientId);
    return client ? { client } : { problem: UNKNOWN };
  }

  private async document(url: string): Promise<string | null> {
    const cached = this.documents.get(url);
    if (cached && cached.until > Date.now()) return cached.fetched;
    if (!cached && this.documents.size >= DOCUMENT_LIMITS.cacheEntries) this.documents.delete(this.documents.keys().next().value!);
    // Until the fetch ends, concurrent lookups share it; a failure is not kept.
    const entry = { until: Number.POSITIVE_INFINITY, fetched: this.fetchDocument(url, (seconds) => (entry.until = Date.now() + seconds * 1000)) };
    this.documents.set(url, entry);
    const problem = await entry.fetched.catch((err: unknown) => {
      this.documents.delete(url);
      throw err;
    });
    if (problem && this.documents.get(url) === entry) this.documents.delete(url);
    return problem;
  }

  private async fetchDocument(url: string, keepFor: (seconds: number) => void): Promise<string | null> {
    const urlProblem = clientIdUrlProblem(url, this.config.allowPrivateFetch);
    if (urlProblem) return urlProblem;
    let res;
    try {
      res = await guardedFetch(url, { maxBytes: DOCUMENT_LIMITS.maxBytes, timeoutMs: DOCUMENT_LIMITS.timeoutMs, allowPrivate: this.config.allowPrivateFetch, headers: { accept: 'application/json' } });
    } catch (err) {
      if (err instanceof OutboundFetchError) return err.message;
      throw err;
    }
    if (res.status !== 200) return `answered HTTP ${res.status}`;
    const doc = readMetadataDocument(url, res.body);
    if (typeof doc === 'string') return doc;
    await this.repo.saveDocumentClient(url, doc);
    keepFor(cacheSeconds(res.headers['cache-control']));
    return null;
  }
}
