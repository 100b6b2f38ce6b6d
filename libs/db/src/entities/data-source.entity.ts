import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The connector of each project's `meld-messaging` data source, the messaging app's record of
 * consent and clicks (ADR 0181): only that app writes it; ingest refuses writes to it.
 */
export const MESSAGING_CONNECTOR = 'meld-messaging';

@Entity('data_sources')
@Index(['projectId', 'uid'], { unique: true })
export class DataSourceEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Index() @Column('uuid', { name: 'project_id' }) projectId!: string;
  /** Readable name unique in the project: coverage accepts a data source by uid, id or connector. */
  @Column('text') uid!: string;
  @Column('text') name!: string;
  @Column('text', { default: 'api' }) connector!: string;
  /** Higher wins when two non-ingest sources supply the same attribute. */
  @Column('integer', { default: 0 }) priority!: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
