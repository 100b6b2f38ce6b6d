import { DATA_SOURCE } from '@meld/db';
import { BadRequestException, Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

export interface DataSourceRow {
  id: string;
  uid: string;
  name: string;
  connector: string;
}

/** The data sources of a project, which a probe's `datasource` argument names. */
@Injectable()
export class ProjectDataSources {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  list(projectId: string): Promise<DataSourceRow[]> {
    return this.ds.query(`SELECT id, uid, name, connector FROM data_sources WHERE project_id = $1 ORDER BY uid`, [projectId]);
  }
}

/** By id or uid (one source), or by connector name (every source of that connector); none: 400 listing them (probe rule 5). */
export function resolveDataSource(query: string, dataSources: readonly DataSourceRow[]): DataSourceRow[] {
  // An id in any case (uuids are case-insensitive on input); uids and connectors as written.
  const exact = dataSources.filter((d) => d.id === query.toLowerCase() || d.uid === query);
  const matched = exact.length ? exact : dataSources.filter((d) => d.connector === query);
  if (matched.length) return matched;
  throw new BadRequestException({
    message: `datasource: no data source of this project has the id, uid or connector "${query}"`,
    details: { fields: [{ path: 'datasource', message: 'unknown data source' }], datasources: dataSources.map((d) => ({ id: d.id, uid: d.uid, name: d.name, connector: d.connector })) },
  });
}
