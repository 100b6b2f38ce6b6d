import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A dashboard user (consent screen login). The password is stored as a salted scrypt hash. */
@Entity('users')
// Unique whatever the case, as the sign-in reads it: an expression index of the migration (1795269850000), left to it.
@Index('UQ_users_email_lower', { synchronize: false })
export class UserEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Index() @Column('uuid', { name: 'organization_id' }) organizationId!: string;
  @Column('text') email!: string;
  @Column('text', { name: 'password_hash' }) passwordHash!: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
