import type { AttributeType } from '@meld/contracts';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('attributes')
@Index(['projectId', 'uid'], { unique: true })
// One slot per project and kind: an expression index of the migration (1795268000000), left to it.
@Index('UQ_attributes_slot', { synchronize: false })
export class AttributeEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('uuid', { name: 'project_id' }) projectId!: string;
  @Column('text') uid!: string;
  @Column('text') label!: string;
  @Column('text') type!: AttributeType;
  @Column('boolean', { default: false }) multivalue!: boolean;
  @Column('boolean', { default: true }) enabled!: boolean;
  @Column('boolean', { default: true }) visible!: boolean;
  @Column('boolean', { default: false }) internal!: boolean;
  @Column('boolean', { default: false }) unique!: boolean;
  @Column('boolean', { default: false }) reserved!: boolean;
  /** Its ClickHouse column (ATTRIBUTE_SLOTS in @meld/contracts); given by a database trigger, never written here. */
  @Column({ type: 'smallint', nullable: true, insert: false, update: false }) slot!: number | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
