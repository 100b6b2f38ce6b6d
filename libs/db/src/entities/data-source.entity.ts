import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

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
