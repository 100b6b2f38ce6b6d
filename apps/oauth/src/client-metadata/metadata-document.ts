import { z } from 'zod';
import { GRANT_TYPES } from '../protocol/oauth-model';
import { displayable } from '../registration/client-name';
import { storable, webPageUrl } from '../registration/register-client';
import { redirectUriProblem } from '../registration/redirect-uri';

/** A client_id that names a Client ID Metadata Document rather than a registered client. */
export const isMetadataDocumentId = (clientId: string) => /^https?:\/\//i.test(clientId);

/**
 * Why this client_id cannot be a metadata document URL (draft-ietf-oauth-client-id-metadata-document
 * §3): https (http only on a local stack), a path, no fragment, credentials or dot segments.
 */
export function clientIdUrlProblem(clientId: string, allowHttp: boolean): string | null {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return 'must use https';
  if (url.hash || clientId.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.pathname === '/' || url.href !== clientId || /\/\.\.?(\/|$)/.test(clientId)) return 'must have a path, written without dot segments';
  return null;
}

const Document = z.object({
  client_id: z.string(),
  redirect_uris: z.array(z.unknown()).min(1, 'at least one redirect URI is required'),
  client_name: z.string().trim().min(1).max(100).superRefine(storable).superRefine(displayable).optional(),
  client_uri: webPageUrl().optional(),
  // A public client: there is no secret to share with a document anyone can read.
  token_endpoint_auth_method: z.literal('none', { message: 'must be "none" (no secret can be shared through a public document)' }).default('none'),
  grant_types: z.array(z.enum(GRANT_TYPES)).optional(),
  response_types: z.array(z.literal('code')).optional(),
  scope: z.string().superRefine(storable).optional(),
});

export interface DocumentClient {
  name: string;
  redirectUris: string[];
  metadata: Record<string, unknown>;
}

/** The client a fetched document describes, or why it cannot be used. */
export function readMetadataDocument(clientId: string, body: string): DocumentClient | string {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return 'is not JSON';
  }
  if (json !== null && typeof json === 'object' && 'client_secret' in json) return 'client_secret must not be present';
  const parsed = Document.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue.path.join('.') || 'document'} ${issue.message}`;
  }
  const doc = parsed.data;
  if (doc.client_id !== clientId) return 'client_id must be the URL of the document itself';
  // Its grant_types hold as a registration's do (RFC 7591 §2, ADR 0142): both when it names none.
  if (doc.grant_types && !doc.grant_types.includes('authorization_code')) return 'grant_types must include authorization_code (the only response type is code)';
  for (const [i, uri] of doc.redirect_uris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) return `redirect_uris[${i}] ${problem}`;
  }
  return {
    name: doc.client_name ?? new URL(clientId).host,
    redirectUris: doc.redirect_uris as string[],
    metadata: { client_id_metadata_document: true, client_uri: doc.client_uri ?? null, scope: doc.scope ?? null, grant_types: doc.grant_types ?? [...GRANT_TYPES] },
  };
}
