import type { DataMode, Plan } from '@meld/contracts';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { numericTransformer } from './columns';

@Entity('organizations')
export class OrganizationEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('text') name!: string;
  @Column('text') plan!: Plan;
  @Column('text', { name: 'api_tier', default: 'standard' }) apiTier!: string;
  @Column('numeric', { precision: 14, scale: 4, default: 0, transformer: numericTransformer }) funds!: number;
  @Column('boolean', { default: false }) prepaid!: boolean;
  @Column('text', { name: 'data_mode', default: 'normal' }) dataMode!: DataMode;
  /** The operator allows OAuth clients the sensitive scopes (ADR 0144). */
  @Column('boolean', { name: 'oauth_sensitive_scopes', default: false }) oauthSensitiveScopes!: boolean;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
