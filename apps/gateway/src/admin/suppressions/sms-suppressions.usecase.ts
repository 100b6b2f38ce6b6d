import { isoWithOffset, timestamp } from '@meld/api';
import { destinationOf } from '@meld/contracts';
import { DATA_SOURCE, type SmsSuppression, liftSmsSuppression, listSmsSuppressions, suppressSms } from '@meld/db';
import { parseInput } from '@meld/platform';
import { BadRequestException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { z } from 'zod';
import { ProjectsRepository } from '../projects/projects.repository';
import { found } from '../shared/found';

export const SmsSuppressionSchema = z
  .object({
    phone: z.string().describe('E.164'),
    reason: z.enum(['invalid_destination', 'manual']).describe('`invalid_destination`: the SMSC refused the number as a destination; `manual`: added through this API'),
    detail: z.string().nullable().describe('for `invalid_destination`, the SMPP command_status the SMSC answered'),
    createdAt: timestamp(),
    createdBy: z.enum(['automatic', 'admin']),
  })
  .meta({ id: 'SmsSuppression' });

/** A phone longer than this is no phone: refused before it is parsed. */
const MAX_PHONE = 64;
const E164 = /^\+[1-9][0-9]{1,14}$/;

export const ListSmsSuppressionsQuery = z.strictObject({
  phone: z.string().max(MAX_PHONE, `must be at most ${MAX_PHONE} characters`).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().regex(E164, 'must be the nextCursor of a previous page').optional(),
});

const toResource = (s: SmsSuppression): z.infer<typeof SmsSuppressionSchema> => ({
  phone: s.phone, reason: s.reason, detail: s.detail, createdAt: isoWithOffset(s.createdAt), createdBy: s.createdBy,
});

/**
 * The operator's view of a project's SMS suppression list (ADR 0361): list, add (`manual`), lift.
 * Adding and lifting write the list and its published copy (`_suppressed_sms` on messaging's
 * source contact, through the contacts outbox) in one transaction. Numbers are read as the
 * direct send reads its target: E.164, or national in the project locale.
 */
@Injectable()
export class SmsSuppressions {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly projects: ProjectsRepository,
  ) {}

  async list(projectUid: string, query: unknown) {
    const { phone, limit, cursor } = parseInput(ListSmsSuppressionsQuery, query, 'query');
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const rows = await listSmsSuppressions(this.ds, project.id, { phone: phone === undefined ? undefined : e164Of(phone, project.locale), afterPhone: cursor, limit });
    return { entity: rows.map(toResource), metadata: { count: rows.length, nextCursor: rows.length === limit ? rows.at(-1)!.phone : null } };
  }

  async add(projectUid: string, rawPhone: string) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const phone = e164Of(rawPhone, project.locale);
    const { suppression, created } = await this.ds.transaction((em) => suppressSms(em, project.id, { phone, reason: 'manual', detail: null, createdBy: 'admin' }));
    return { entity: toResource(suppression), metadata: { created } };
  }

  async lift(projectUid: string, rawPhone: string) {
    const project = found(await this.projects.findByUid(projectUid), 'project', projectUid);
    const phone = e164Of(rawPhone, project.locale);
    const lifted = await this.ds.transaction((em) => liftSmsSuppression(em, project.id, phone));
    if (!lifted) throw new NotFoundException('this number is not suppressed');
    return { entity: toResource(lifted) };
  }
}

/** The E.164 form of a number of the path or the query; 400 naming `phone` (never echoing it) when it is not one. */
function e164Of(raw: string, locale: string): string {
  const destination = raw.length <= MAX_PHONE ? destinationOf(raw, locale) : null;
  if (destination) return destination.e164;
  const message = 'not a valid phone number (E.164, or national in the project locale)';
  throw new BadRequestException({ message: `phone: ${message}`, details: { fields: [{ path: 'phone', message }] } });
}
