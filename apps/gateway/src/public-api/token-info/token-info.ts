import { isoWithOffset } from '@meld/api';
import { type TokenRecord, dataPolicy } from '@meld/auth';
import { type DataMode, type Plan, strictestDataMode } from '@meld/contracts';
import { query } from '../access/store-unavailable';

type Db = { isInitialized: boolean; query(sql: string, params?: unknown[]): Promise<unknown> };

interface OrgRow {
  id: string;
  name: string;
  plan: Plan;
  api_tier: string;
  funds: string;
  data_mode: DataMode;
  prefix: string;
  label: string | null;
  created_at: Date;
}

const ORG_SQL = `SELECT o.id, o.name, o.plan, o.api_tier, o.funds, o.data_mode, t.prefix, t.label, t.created_at
  FROM tokens t JOIN organizations o ON o.id = t.organization_id WHERE t.id = $1`;
const PROJECTS_SQL = `SELECT id, uid, name, data_mode FROM projects
  WHERE organization_id = $1 AND ($2::boolean OR uid = ANY($3::text[])) ORDER BY created_at, uid`;

/**
 * `GET /v1/`: the token with the projects it reaches, and what it may do. Read fresh
 * (not from the caches): it is how a client validates a token, and funds change often.
 */
export async function describeToken(db: Db, token: TokenRecord) {
  const [org] = await query<OrgRow>(db, ORG_SQL, [token.id]);
  if (!org) return null; // deleted since it was cached
  const projects = await query<{ id: string; uid: string; name: string; data_mode: DataMode | null }>(db, PROJECTS_SQL, [
    token.organizationId,
    token.projects.includes('*'),
    token.projects,
  ]);
  // A project's own mode overrides its organization's; no reachable project: the organization's.
  const dataMode = projects.length ? strictestDataMode(projects.map((p) => p.data_mode ?? org.data_mode)) : org.data_mode;
  const caller = { kind: token.kind, scopes: token.scopes };
  return {
    entity: {
      id: token.id,
      kind: token.kind,
      prefix: org.prefix,
      label: org.label,
      createdAt: isoWithOffset(org.created_at),
      projects: projects.map((p) => ({ id: p.id, uid: p.uid, name: p.name })),
    },
    metadata: {
      organization: {
        id: org.id,
        name: org.name,
        plan: org.plan,
        apiTier: org.api_tier,
        ...(token.scopes.includes('ACCOUNT_READ') ? { funds: Number(org.funds) } : {}),
      },
      dataMode,
      dataPolicy: dataPolicy(dataMode, caller),
      scopes: token.scopes,
    },
  };
}
