import { z } from 'zod';
import type { DataSourceEntity } from '@meld/db';
import { timestamp } from './envelope';
import { isoWithOffset } from './time';

export const DataSourceSchema = z
  .object({
    id: z.string().describe('used in stream paths: /v1/project/{project}/datasource/{id}/stream'),
    uid: z.string(),
    name: z.string(),
    connector: z.string().describe('`api` for sources that push through the ingest API'),
    priority: z.int().describe('higher wins when two non-ingest sources supply the same attribute'),
    createdAt: timestamp(),
  })
  .meta({ id: 'DataSource' });
export type DataSourceResource = z.infer<typeof DataSourceSchema>;

export function toDataSourceResource(d: DataSourceEntity): DataSourceResource {
  return { id: d.id, uid: d.uid, name: d.name, connector: d.connector, priority: d.priority, createdAt: isoWithOffset(d.createdAt) };
}
