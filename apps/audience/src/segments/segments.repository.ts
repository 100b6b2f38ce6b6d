import { isoWithOffset, listPage } from '@meld/api';
import { DATA_SOURCE } from '@meld/db';
import type { ListQuery } from '@meld/filters';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SEGMENT_FIELDS } from './segment-fields';
import type { Segment } from './segment.schema';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COLUMNS = `g.id, g.name, g.description, g.filter, g.created_at AS "createdAt", g.updated_at AS "updatedAt"`;

interface SegmentRow {
  id: string;
  name: string;
  description: string | null;
  filter: Segment['filter'];
  createdAt: Date;
  updatedAt: Date;
}

const toSegment = (r: SegmentRow): Segment => ({ ...r, createdAt: isoWithOffset(r.createdAt), updatedAt: isoWithOffset(r.updatedAt) });

/** Segments of a project; every statement is scoped by the project, and a malformed id finds nothing. */
@Injectable()
export class SegmentsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async create(projectId: string, values: Pick<Segment, 'name' | 'description' | 'filter'>): Promise<Segment> {
    const rows: SegmentRow[] = await this.ds.query(`INSERT INTO segments AS g (project_id, name, description, filter) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`, [
      projectId,
      values.name,
      values.description,
      JSON.stringify(values.filter),
    ]);
    return toSegment(rows[0]);
  }

  async find(projectId: string, id: string): Promise<Segment | null> {
    if (!UUID.test(id)) return null;
    const rows: SegmentRow[] = await this.ds.query(`SELECT ${COLUMNS} FROM segments g WHERE g.project_id = $1 AND g.id = $2`, [projectId, id]);
    return rows[0] ? toSegment(rows[0]) : null;
  }

  /** Sets the given fields (and `updated_at`); null when there is no such segment. */
  async update(projectId: string, id: string, values: Partial<Pick<Segment, 'name' | 'description' | 'filter'>>): Promise<Segment | null> {
    if (!UUID.test(id)) return null;
    // TypeORM answers an UPDATE with [rows, affected].
    const [rows]: [SegmentRow[], number] = await this.ds.query(
      `UPDATE segments g SET
         name = CASE WHEN $3 THEN $4 ELSE g.name END,
         description = CASE WHEN $5 THEN $6 ELSE g.description END,
         filter = CASE WHEN $7 THEN $8::jsonb ELSE g.filter END,
         updated_at = now()
       WHERE g.project_id = $1 AND g.id = $2 RETURNING ${COLUMNS}`,
      [projectId, id, 'name' in values, values.name ?? null, 'description' in values, values.description ?? null, 'filter' in values, JSON.stringify(values.filter ?? null)],
    );
    return rows[0] ? toSegment(rows[0]) : null;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    // TypeORM answers a DELETE with [rows, affected].
    const [, deleted]: [unknown, number] = await this.ds.query(`DELETE FROM segments WHERE project_id = $1 AND id = $2`, [projectId, id]);
    return deleted > 0;
  }

  async list(projectId: string, query: ListQuery) {
    const { rows, total } = await listPage<SegmentRow>(this.ds, { columns: COLUMNS, from: 'segments g', scope: 'g.project_id = $1', scopeParams: [projectId] }, query, SEGMENT_FIELDS);
    return { segments: rows.map(toSegment), total };
  }
}
