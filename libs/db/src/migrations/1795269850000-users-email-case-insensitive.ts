import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dashboard user's e-mail is unique whatever its case, as the consent sign-in reads it
 * (`lower(email) = lower($1)`, ADR 0143): the unique index was on `email` as written, so
 * `Ann@x.io` and `ann@x.io` could both exist and a sign-in took either. Users that would
 * collide are not merged or deleted here (their grants and tokens differ): the migration
 * stops, naming their ids (never their e-mails), for the operator to delete the extra ones
 * (`DELETE /admin/v1/users/<id>`, docs/deploy.md) and migrate again.
 */
export class UsersEmailCaseInsensitive1795269850000 implements MigrationInterface {
  name = 'UsersEmailCaseInsensitive1795269850000';

  async up(q: QueryRunner): Promise<void> {
    // Taken first, so no user written meanwhile slips between the check and the index.
    await q.query(`LOCK TABLE "users" IN SHARE MODE`);
    const clashes: Array<{ ids: string[] }> = await q.query(
      `SELECT array_agg(id::text ORDER BY created_at, id) AS ids FROM "users" GROUP BY lower("email") HAVING count(*) > 1 ORDER BY min(created_at)`,
    );
    if (clashes.length) {
      throw new Error(
        `users: e-mails that differ only in case belong to more than one user (ids, one group a line); delete the extra users (DELETE /admin/v1/users/<id>), then migrate again:\n${clashes.map((c) => c.ids.join(' ')).join('\n')}`,
      );
    }
    await q.query(`CREATE UNIQUE INDEX "UQ_users_email_lower" ON "users" (lower("email"))`);
    await q.query(`DROP INDEX "IDX_97672ac88f789774dd47f7c8be"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNIQUE INDEX "IDX_97672ac88f789774dd47f7c8be" ON "users" ("email")`);
    await q.query(`DROP INDEX "UQ_users_email_lower"`);
  }
}
