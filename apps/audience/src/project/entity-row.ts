import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * One entity's columns in a hand-written SELECT, built once from TypeORM's metadata (ADR 0209):
 * `columns` lists `alias."column" AS "alias.column"`, and `read` hydrates a result row back
 * into the entity with the driver's own conversions (column transformers, dates), so a
 * repository keeps entities without TypeORM building and parsing its query on every call.
 */
export class EntityColumns<T extends ObjectLiteral> {
  readonly columns: string;
  private readonly metadata: EntityMetadata;

  constructor(
    private readonly ds: DataSource,
    target: EntityTarget<T>,
    private readonly alias: string,
  ) {
    this.metadata = ds.getMetadata(target);
    this.columns = this.metadata.columns.map((c) => `${alias}."${c.databaseName}" AS "${alias}.${c.databaseName}"`).join(', ');
  }

  read(row: Record<string, unknown>): T {
    const entity = this.metadata.create() as T;
    for (const column of this.metadata.columns) {
      column.setEntityValue(entity, this.ds.driver.prepareHydratedValue(row[`${this.alias}.${column.databaseName}`], column));
    }
    return entity;
  }
}
