import type { AttributeType } from '@meld/contracts';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('attributes')
@Index(['projectId', 'uid'], { unique: true })
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
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
