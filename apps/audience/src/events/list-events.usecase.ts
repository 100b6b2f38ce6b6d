import { CONTACT_DATA_BLOCKED, contactDataMask, type Principal } from '@meld/auth';
import { EVENTS_LOOK_BACK_DAYS, type Scope } from '@meld/contracts';
import { isoWithOffset, pageTotal } from '@meld/api';
import { BadRequestException, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { EventsRepository } from './events.repository';

export const EVENTS_DEFAULT_LIMIT = 50;
export const EVENTS_MAX_LIMIT = 500;
export const EVENTS_SCOPES: readonly Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS'];

export interface ListEventsCommand {
  principal: Principal;
  projectId: string;
  audienceId: string;
  /** Query parameters as Fastify read them: a repeated one is a list. */
  start?: unknown;
  limit?: unknown;
  now?: Date;
}

/**
 * `_start` and `_limit` come together or not at all; start ≥ 0, 1 ≤ limit ≤ 500. A refusal names
 * the parameter in `details.parameter`, as the list query's do (ADR 0055); a repeated one (Fastify
 * reads it as a list) is said to be repeated, not "not an integer".
 */
export function parsePaging(start: unknown, limit: unknown): { start: number; limit: number } {
  if (start === undefined && limit === undefined) return { start: 0, limit: EVENTS_DEFAULT_LIMIT };
  if (start === undefined || limit === undefined) throw pagingError(start === undefined ? '_start' : '_limit', '_start and _limit go together: send both or neither');
  const s = integer(start, '_start');
  const l = integer(limit, '_limit');
  if (!Number.isInteger(s)) throw pagingError('_start', '_start must be an integer ≥ 0');
  if (!Number.isInteger(l) || l < 1 || l > EVENTS_MAX_LIMIT) throw pagingError('_limit', `_limit must be an integer from 1 to ${EVENTS_MAX_LIMIT}`);
  return { start: s, limit: l };
}

function integer(value: unknown, parameter: string): number {
  if (Array.isArray(value)) throw pagingError(parameter, `${parameter} is given more than once`);
  return typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : NaN;
}

const pagingError = (parameter: string, message: string) => new BadRequestException({ message, details: { parameter } });

/**
 * The events of one audience contact (absorbed ids resolve to the survivor), newest first,
 * within the plan's look-back; parameters as the data mode and level allow (ADR 0121).
 */
@Injectable()
export class ListEvents {
  constructor(private readonly events: EventsRepository) {}

  async execute(command: ListEventsCommand) {
    const { principal, projectId } = command;
    const missing = EVENTS_SCOPES.filter((s) => !principal.scopes.includes(s));
    if (missing.length) throw new ForbiddenException(`this token lacks ${missing.join(', ')}`);
    // The project's data mode applies to event parameters as to contact attributes (ADR 0121).
    const mask = contactDataMask(principal);
    if (!mask) throw new ForbiddenException(CONTACT_DATA_BLOCKED);
    const paging = parsePaging(command.start, command.limit);
    const audienceId = await this.events.resolveAudienceId(projectId, command.audienceId);
    if (!audienceId) throw new NotFoundException('audience contact not found');
    // No plan on the principal: the smallest look-back.
    const lookBackDays = EVENTS_LOOK_BACK_DAYS[principal.plan ?? 's'];
    const now = command.now ?? new Date();
    const since = new Date(Math.floor(now.getTime() / 1000) * 1000 - lookBackDays * 86_400_000);
    const [counted, events] = await Promise.all([
      this.events.count(projectId, audienceId, since),
      this.events.list(projectId, audienceId, since, paging.start, paging.limit),
    ]);
    const total = pageTotal(counted, events.length, paging);
    return {
      entity: events.map((e) => ({
        // The source's `_event_id` may hold an email or a phone: masked as parameters are (ADR 0354).
        id: mask(e.id),
        type: e.type,
        date: isoWithOffset(new Date(e.date * 1000)),
        receivedAt: isoWithOffset(new Date(e.receivedAt * 1000)),
        parameters: mask(e.parameters),
        dataSourceId: e.dataSourceId,
      })),
      metadata: {
        audienceId,
        start: paging.start,
        limit: paging.limit,
        count: events.length,
        total,
        lookBackDays,
        since: isoWithOffset(since),
      },
    };
  }
}
