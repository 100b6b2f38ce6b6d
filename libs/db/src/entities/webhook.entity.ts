import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

@Entity('webhooks')
@Index(['organizationId', 'kind'], { unique: true })
export class WebhookEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('uuid', { name: 'organization_id' }) organizationId!: string;
  @Column('text') kind!: 'sms-status';
  @Column('text') url!: string;
  @Column('text', { nullable: true }) secret!: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
