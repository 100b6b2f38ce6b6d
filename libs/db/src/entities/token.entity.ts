import type { Scope } from '@meld/contracts';
import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An API token. Only a SHA-256 of the secret is stored (tokens are 256-bit random, so a
 * slow hash adds nothing) and a short prefix to recognise it in lists and logs.
 */
@Entity('tokens')
@Index('IDX_tokens_oauth_grant', ['oauthGrantId'], { where: '"oauth_grant_id" IS NOT NULL' })
export class TokenEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Index() @Column('uuid', { name: 'organization_id' }) organizationId!: string;
  @Column('text') kind!: 'product' | 'datasource' | 'oauth';
  @Index({ unique: true }) @Column('text', { name: 'secret_hash' }) secretHash!: string;
  @Column('text') prefix!: string;
  @Column('text', { array: true, default: () => "'{}'" }) scopes!: Scope[];
  /** Project UIDs the token reaches, or `['*']` for every project of the organization. */
  @Column('text', { array: true, default: () => "'{}'" }) projects!: string[];
  @Column('uuid', { name: 'data_source_id', nullable: true }) dataSourceId!: string | null;
  @Column('uuid', { name: 'user_id', nullable: true }) userId!: string | null;
  /** The OAuth grant an access token was issued under (ADR 0142): revoking the grant ends it. */
  @Column('uuid', { name: 'oauth_grant_id', nullable: true }) oauthGrantId!: string | null;
  @Column('text', { nullable: true }) label!: string | null;
  @Column('timestamptz', { name: 'expires_at', nullable: true }) expiresAt!: Date | null;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt!: Date | null;
  /** RFC 8707 resource an `oauth` token is bound to; null: unbound (ADR 0146). */
  @Column('text', { nullable: true }) resource!: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
