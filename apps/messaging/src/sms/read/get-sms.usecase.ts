import { isoWithOffset } from '@meld/api';
import { Injectable, NotFoundException } from '@nestjs/common';
import type { z } from 'zod';
import type { SmsReadEntity } from '../sms.schema';
import { SmsRepository, isUuid } from '../sms.repository';
import { SMS_COLUMNS, type SmsRow, toSmsView } from './sms-view';

export interface GetSmsCommand {
  projectId: string;
  smsId: string;
  /** dataPolicy.mayReadPii of the caller: the text and the number in clear. */
  mayReadPii: boolean;
}

type SmsRead = z.infer<typeof SmsReadEntity> & { history: Array<{ status: string; at: string; error: string | null }> };

/** `GET …/channel/sms/sms/{id}`: the message and its status history, oldest change first. */
@Injectable()
export class GetSms {
  constructor(private readonly repo: SmsRepository) {}

  async execute(cmd: GetSmsCommand): Promise<{ entity: SmsRead }> {
    const [row]: SmsRow[] = isUuid(cmd.smsId) ? await this.repo.ds.query(`SELECT ${SMS_COLUMNS} FROM sms_messages m WHERE m.project_id = $1 AND m.id = $2`, [cmd.projectId, cmd.smsId]) : [];
    if (!row) throw new NotFoundException('SMS not found');
    const history: Array<{ status: string; at: Date; error: string | null }> = await this.repo.ds.query(
      `SELECT status, at, error FROM sms_status_history WHERE sms_id = $1 ORDER BY id`,
      [row.id],
    );
    return { entity: { ...toSmsView(row, cmd.mayReadPii), history: history.map((h) => ({ status: h.status, at: isoWithOffset(h.at), error: h.error })) } };
  }
}
