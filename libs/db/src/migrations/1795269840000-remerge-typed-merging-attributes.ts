import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A merging attribute of type `email` or `phone` is keyed as an email or a phone (ADR 0024); it was
 * keyed as text. The projects merging on such a custom attribute are merged again (ADR 0331), as
 * after a change of their merging attributes, so their stored keys take the new form and the
 * contacts that share an address spelled differently merge.
 */
export class RemergeTypedMergingAttributes1795269840000 implements MigrationInterface {
  name = 'RemergeTypedMergingAttributes1795269840000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `INSERT INTO remerge_requests (project_id, requested_at)
       SELECT p.id, clock_timestamp() FROM projects p
        WHERE EXISTS (SELECT 1 FROM attributes a WHERE a.project_id = p.id AND a.uid = ANY(p.merging_attributes) AND a.type IN ('email', 'phone') AND a.uid NOT LIKE '\\_%')
       ON CONFLICT (project_id) DO UPDATE SET requested_at = EXCLUDED.requested_at, cursor_data_source_id = NULL, cursor_user_id = NULL,
                                              contacts_done = 0, lease_until = NULL, done_at = NULL`,
    );
  }

  async down(): Promise<void> {
    // Nothing to undo: a re-merge under the previous keying would be requested by its own change.
  }
}
