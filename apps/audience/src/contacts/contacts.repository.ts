import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { CONTACT_ATTRIBUTES_SQL } from '../shared/contact-attributes-sql';
import { poolRead } from '../shared/pool-read';

/** An audience contact row as identity-merge wrote it, with the number of contacts the look-up matched. */
export interface ContactRow {
  id: string;
  attributes: Record<string, unknown>;
  datasources: string[];
  ds_contact_ids: string[];
  matches: number;
}

/** How a contact is looked up: a merge key (normalised value) or the raw `_user_id`. */
export type ContactLookup = { by: 'email' | 'phone'; value: string } | { by: 'user'; value: string };

const KEY_ATTRIBUTE = { email: '_email', phone: '_phone_mobile' } as const;

/**
 * Reads the tables identity-merge writes (`audience_contacts`, `audience_members`,
 * `merge_keys`); never writes them. A contact matches when one of its source contacts
 * carries the key (merge keys of a merging attribute, or the membership's user id) or when
 * its merged attribute equals the normalised value (attributes that do not merge). The most
 * recently updated match is returned with the count.
 */
@Injectable()
export class ContactsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async projectLocale(organizationId: string, projectId: string): Promise<string | null> {
    const rows = await poolRead<{ locale: string }>(this.ds, `SELECT locale FROM projects WHERE id = $1 AND organization_id = $2`, [projectId, organizationId]);
    return rows[0]?.locale ?? null;
  }

  async find(projectId: string, lookup: ContactLookup): Promise<ContactRow | null> {
    const [members, attribute] =
      lookup.by === 'user'
        ? [`SELECT m.audience_id AS id FROM audience_members m WHERE m.project_id = $1 AND m.user_id = $2`, `c.attributes->>'_user_id' = $2`]
        : [
            `SELECT m.audience_id AS id FROM merge_keys k
               JOIN audience_members m ON m.project_id = k.project_id AND m.data_source_id = k.data_source_id AND m.user_id = k.user_id
              WHERE k.project_id = $1 AND k.attribute = '${KEY_ATTRIBUTE[lookup.by]}' AND k.value = $2`,
            // The expressions of the migrations' indexes (IDX_audience_contacts_email_icu / _phone); ICU lowers
            // beyond ASCII whatever the database's LC_CTYPE (ADR 0046), as the looked-up value was lowered.
            lookup.by === 'email' ? `lower((c.attributes->>'_email') COLLATE "und-x-icu") = $2` : `c.attributes->>'_phone_mobile' = $2`,
          ];
    const rows = await poolRead<ContactRow>(
      this.ds,
      `WITH ids AS (${members} UNION SELECT c.id FROM audience_contacts c WHERE c.project_id = $1 AND ${attribute})
       SELECT c.id, ${CONTACT_ATTRIBUTES_SQL} AS attributes, c.datasources, c.ds_contact_ids, count(*) OVER ()::int AS matches
         FROM audience_contacts c JOIN ids ON ids.id = c.id
        WHERE c.project_id = $1
        ORDER BY c.updated_at DESC, c.id DESC
        LIMIT 1`,
      [projectId, lookup.value],
    );
    return rows[0] ?? null;
  }
}
