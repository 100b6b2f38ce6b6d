import type { DataMode } from '@meld/contracts';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity('projects')
export class ProjectEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Index({ unique: true }) @Column('text') uid!: string;
  @Index() @Column('uuid', { name: 'organization_id' }) organizationId!: string;
  @Column('text') name!: string;
  @Column('text', { nullable: true }) description!: string | null;
  @Column('text', { name: 'project_type', default: 'standard' }) projectType!: string;
  @Column('text', { name: 'project_status', default: 'active' }) projectStatus!: string;
  @Column('text', { default: 'en_US' }) locale!: string;
  @Column('text', { default: 'UTC' }) timezone!: string;
  @Column('text', { name: 'default_sms_sender', nullable: true }) defaultSmsSender!: string | null;
  @Column('text', { name: 'short_tracking_domain', nullable: true }) shortTrackingDomain!: string | null;
  @Column('text', { name: 'unsubscribe_tracking_domain', nullable: true }) unsubscribeTrackingDomain!: string | null;
  @Column('text', { name: 'business_type', nullable: true }) businessType!: string | null;
  @Column('integer', { name: 'business_contacts_size', default: 0 }) businessContactsSize!: number;
  @Column('text', { name: 'business_url', default: '' }) businessUrl!: string;
  @Column('timestamptz', { name: 'locked_until', nullable: true }) lockedUntil!: Date | null;
  @Column('text', { name: 'locked_reason', nullable: true }) lockedReason!: string | null;
  @Column('jsonb', { name: 'test_sms_numbers', default: () => "'[]'" }) testSmsNumbers!: string[];
  @Column('jsonb', { name: 'conversion_config', nullable: true }) conversionConfig!: Record<string, unknown> | null;
  @Column('jsonb', { name: 'attribution_config' }) attributionConfig!: Record<string, number>;
  @Column('jsonb', { name: 'general_config' }) generalConfig!: Record<string, Record<string, unknown>>;
  @Column('jsonb', { nullable: true }) brand!: Record<string, unknown> | null;
  /** Merging attributes beyond `_user_id`, in the order they were configured. */
  @Column('text', { name: 'merging_attributes', array: true, default: () => "'{}'" }) mergingAttributes!: string[];
  /** Overrides the organization's data mode for this project when set. */
  @Column('text', { name: 'data_mode', nullable: true }) dataMode!: DataMode | null;
  @Column('text', { name: 'legal_profile_status', default: 'missing' }) legalProfileStatus!: 'verified' | 'pending' | 'missing';
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
