import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A dashboard user (consent screen login). The password is stored as a salted scrypt hash. */
@Entity('users')
export class UserEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Index() @Column('uuid', { name: 'organization_id' }) organizationId!: string;
  @Index({ unique: true }) @Column('text') email!: string;
  @Column('text', { name: 'password_hash' }) passwordHash!: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
