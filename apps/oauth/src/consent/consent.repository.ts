import { randomBytes } from 'node:crypto';
import { unstorableText } from '@meld/api';
import { hashToken } from '@meld/auth';
import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SESSION_SECONDS } from '../oauth-config';

export interface ConsentUser {
  id: string;
  organizationId: string;
  organizationName: string;
  sensitiveScopesAllowed: boolean;
  projects: Array<{ uid: string; name: string }>;
}

/** Login window (ADR 0143): failures per e-mail and per client IP inside it. */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const LOGIN_LIMITS = { email: 5, ip: 20 };

/** Dashboard users, consent sessions and failed-login counts. Sessions are opaque, stored hashed. */
@Injectable()
export class ConsentRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** Null for an e-mail no user has, one Postgres cannot hold (U+0000) included. */
  async userByEmail(email: string): Promise<{ id: string; passwordHash: string } | null> {
    if (unstorableText(email)) return null;
    const [row] = await this.ds.query(`SELECT id, password_hash AS "passwordHash" FROM users WHERE lower(email) = lower($1)`, [email]);
    return row ?? null;
  }

  async openSession(userId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.ds.query(`INSERT INTO oauth_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`, [hashToken(token), userId, SESSION_SECONDS]);
    return token;
  }

  /** The signed-in user with what they may grant, or null when the session is unknown or over. */
  async sessionUser(token: string): Promise<ConsentUser | null> {
    const [row] = await this.ds.query(
      `SELECT u.id, u.organization_id AS "organizationId", o.name AS "organizationName", o.oauth_sensitive_scopes AS "sensitiveScopesAllowed",
              COALESCE((SELECT json_agg(json_build_object('uid', p.uid, 'name', p.name) ORDER BY p.name, p.uid) FROM projects p WHERE p.organization_id = o.id), '[]'::json) AS projects
         FROM oauth_sessions s JOIN users u ON u.id = s.user_id JOIN organizations o ON o.id = u.organization_id
        WHERE s.token_hash = $1 AND s.expires_at > now()`,
      [hashToken(token)],
    );
    return row ?? null;
  }

  /**
   * Counts an attempt as a failure before its password is checked, then reads the failures
   * inside the window per key, its own included: attempts sent at once each see the others,
   * so no more are tried than the limit (a count read first let them all through, ADR 0143).
   * `at` names the attempt's rows for {@link forgetAttempt}.
   */
  async beginAttempt(keys: string[]): Promise<{ at: string; counts: Map<string, number> }> {
    const [{ at }] = await this.ds.query(`INSERT INTO oauth_login_failures (key) SELECT unnest($1::text[]) RETURNING at::text`, [keys]);
    const rows: Array<{ key: string; n: number }> = await this.ds.query(
      `SELECT key, count(*)::int AS n FROM oauth_login_failures WHERE key = ANY($1) AND at > now() - make_interval(secs => $2) GROUP BY key`,
      [keys, LOGIN_WINDOW_SECONDS],
    );
    return { at, counts: new Map(rows.map((r) => [r.key, r.n])) };
  }

  /** Takes back an attempt that was refused unchecked or succeeded: one row per key (rows of a key and instant are alike). */
  async forgetAttempt(keys: string[], at: string): Promise<void> {
    await this.ds.query(
      `DELETE FROM oauth_login_failures WHERE ctid = ANY(ARRAY(SELECT (SELECT ctid FROM oauth_login_failures WHERE key = k AND at = $2::timestamptz LIMIT 1) FROM unnest($1::text[]) AS k))`,
      [keys, at],
    );
  }
}
