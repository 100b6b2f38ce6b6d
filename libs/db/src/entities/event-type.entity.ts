import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('event_types')
@Index(['projectId', 'uid'], { unique: true })
export class EventTypeEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('uuid', { name: 'project_id' }) projectId!: string;
  @Column('text') uid!: string;
  @Column('text') name!: string;
  @Column('text') category!: string;
  @Column('boolean', { default: false }) attribution!: boolean;
  @Column('boolean', { default: false }) automation!: boolean;
  @Column('boolean', { default: false }) important!: boolean;
  /** Days events of this type are kept; null follows the plan's look-back. */
  @Column('integer', { name: 'retention_days', nullable: true }) retentionDays!: number | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}

@Entity('event_parameters')
@Index(['eventTypeId', 'parameter'], { unique: true })
export class EventParameterEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('uuid', { name: 'event_type_id' }) eventTypeId!: string;
  @Column('text') parameter!: string;
  @Column('text') title!: string;
  @Column('text', { name: 'data_type' }) dataType!: string;
  @Column('boolean', { default: false }) required!: boolean;
  /** Most values the parameter may carry; 1 means single-valued. */
  @Column('integer', { name: 'multi_value', default: 1 }) multiValue!: number;
  @Column('integer', { name: 'max_length', nullable: true }) maxLength!: number | null;
}
