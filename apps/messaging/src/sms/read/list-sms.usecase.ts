import { listPage, listQueryOf, pageMetadata } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { SmsRepository } from '../sms.repository';
import { withCurrentAudienceIds } from './audience-ids';
import { SMS_FIELDS } from './sms-fields';
import { SMS_COLUMNS, type SmsRow, toSmsView } from './sms-view';

export interface ListSmsCommand {
  projectId: string;
  queryString: string;
  mayReadPii: boolean;
}

/** `GET …/channel/sms/sms`: the project's message history through the list query filter, newest first by default (ADR 0159). */
@Injectable()
export class ListSms {
  constructor(private readonly repo: SmsRepository) {}

  async execute(cmd: ListSmsCommand) {
    const { query, fields } = await withCurrentAudienceIds(this.repo.ds, cmd.projectId, listQueryOf(cmd.queryString, SMS_FIELDS));
    const { rows, total } = await listPage<SmsRow>(this.repo.ds, { columns: SMS_COLUMNS, from: 'sms_messages m', scope: 'm.project_id = $1', scopeParams: [cmd.projectId] }, query, fields);
    return { entity: rows.map((r) => toSmsView(r, cmd.mayReadPii)), metadata: pageMetadata(query, rows.length, total) };
  }
}
