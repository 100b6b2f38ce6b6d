import { isoWithOffset } from '@meld/api';
import { maskPhone } from '@meld/auth';
import { Injectable, NotFoundException } from '@nestjs/common';
import type { z } from 'zod';
import type { SmsReadEntity } from '../sms.schema';
import { SmsRepository, isUuid } from '../sms.repository';


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
    const [row] = isUuid(cmd.smsId)
      ? await this.repo.ds.query(
          `SELECT id, status, encoding, messages_count AS "messagesCount", price_per_sms::float8 AS "pricePerSms", audience_id AS "audienceId",
                  sender_id AS "senderId", destination, text, error, created_at AS "createdAt", updated_at AS "updatedAt"
             FROM sms_messages WHERE project_id = $1 AND id = $2`,
          [cmd.projectId, cmd.smsId],
        )
      : [];
    if (!row) throw new NotFoundException('SMS not found');
    const history: Array<{ status: string; at: Date; error: string | null }> = await this.repo.ds.query(
      `SELECT status, at, error FROM sms_status_history WHERE sms_id = $1 ORDER BY id`,
      [row.id],
    );
    return {
      entity: {
        ...row,
        destination: cmd.mayReadPii ? row.destination : maskPhone(row.destination),
        text: cmd.mayReadPii ? row.text : null,
        createdAt: isoWithOffset(row.createdAt),
        updatedAt: isoWithOffset(row.updatedAt),
        history: history.map((h) => ({ status: h.status, at: isoWithOffset(h.at), error: h.error })),
      },
    };
  }
}
