import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { numericTransformer } from './columns';

@Entity('senders')
export class SenderEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Index() @Column('uuid', { name: 'project_id' }) projectId!: string;
  @Column('text') channel!: 'sms' | 'rcs';
  /** The `from` of an SMS, or the agent name of RCS. */
  @Column('text') alias!: string;
  @Column('text') name!: string;
  @Column('text', { default: 'active' }) status!: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}

/** Per country: whether carriers accept the sender, and its regulation-aware effective status. */
@Entity('sender_countries')
@Index(['senderId', 'country'], { unique: true })
export class SenderCountryEntity {
  @PrimaryGeneratedColumn('uuid') id!: string;
  @Column('uuid', { name: 'sender_id' }) senderId!: string;
  @Column('text') country!: string;
  @Column('boolean', { default: true }) accepted!: boolean;
  @Column('text', { name: 'effective_status', default: 'active' }) effectiveStatus!: string;
  @Column('numeric', { precision: 10, scale: 5, default: 0, transformer: numericTransformer }) price!: number;
}
