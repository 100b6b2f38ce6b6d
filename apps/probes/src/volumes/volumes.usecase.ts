import { type ContactDataView, contactDataView, type Principal } from '@meld/auth';
import { SYSTEM_EVENT_TYPES } from '@meld/contracts';
import { sampleQualifier, samplingPlan, type SamplingPlan, type Sql } from '@meld/clickhouse';
import { CatalogueRepository } from '@meld/db';
import { checkedSize } from '@meld/filters';
import { BadRequestException, Injectable } from '@nestjs/common';
import { ProjectDataSources, resolveDataSource } from '../shared/data-sources';
import { ProbeReads } from '../shared/probe-reads';
import { filterErrorsAs400, ProbeRootParser } from '../shared/probe-root';
import { type DeclaredParameter, eventParameters, type ParameterValuesRead, parameterValuesRead } from './event-parameters';
import { type LastSeen, lastSeen } from './last-seen';
import type { ComputedVolumes, VolumesInput } from './volumes.schema';
import { bandColumn, type EventScope, populationQuery, rootContacts, sampledEvents, volumesQuery } from './volumes-sql';
import { effectiveWindowDays, volumesWindow, windowStart } from './volumes-window';

export interface VolumesCommand {
  projectId: string;
  principal: Principal;
  input: VolumesInput;
  now: Date;
}

type Population = { contacts: number; scanned: (plan: SamplingPlan) => number };
/** The type an `event` probe reads: its parameters come from the catalogue, or are fixed for a system type. */
type ProbedType = { uid: string; name: string; retentionDays: number | null; parameters: () => Promise<DeclaredParameter[]> };

type VolumeRow = { event_type: string; events: string; last: string };

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * POST /event/volumes, computed (probe rules 6, 11, 12, 13; ADR 0166): every declared type's
 * exact count in its window, and with `event` (a declared type or one Meld writes itself, ADR
 * 0336) that type's parameter values sampled by contact, the band following the whole project
 * audience. A withheld view (blocked mode) reports counts but no `lastSeenAt` (ADR 0164).
 */
@Injectable()
export class VolumesUseCase {
  constructor(
    private readonly roots: ProbeRootParser,
    private readonly catalogue: CatalogueRepository,
    private readonly dataSources: ProjectDataSources,
    private readonly reads: ProbeReads,
  ) {}

  async execute({ projectId, principal, input, now }: VolumesCommand): Promise<ComputedVolumes> {
    const root = await this.roots.parse(projectId, input, principal);
    const [types, sources] = await Promise.all([this.catalogue.listEventTypes(projectId), input.datasource ? this.dataSources.list(projectId) : undefined]);
    const probed = input.event === undefined ? undefined : this.probedType(input.event, types);
    if (input.event !== undefined && !probed) {
      const known = [...types.map((t) => t.uid), ...SYSTEM_EVENT_TYPES.map((t) => t.uid)];
      throw new BadRequestException({ message: `event: no event type "${input.event}" in this project`, details: { fields: [{ path: 'event', message: 'unknown event type' }], eventTypes: known } });
    }
    const matched = input.datasource ? resolveDataSource(input.datasource, sources!) : undefined;

    const project = await this.population(populationQuery(projectId, undefined, now));
    const window = volumesWindow({ audienceSize: project.contacts, requestedDays: input.window, plan: principal.plan, now });
    const typeDays = new Map([...types, ...(probed ? [probed] : [])].map((t) => [t.uid, effectiveWindowDays(window.days, t.retentionDays)]));
    const scopeOf = (uids: string[]): EventScope => ({ projectId, to: seconds(now), types: uids.map((uid) => ({ uid, from: seconds(windowStart(now, typeDays.get(uid)!)) })), dataSourceIds: matched?.map((d) => d.id) });
    const view = contactDataView(principal);
    const plan = samplingPlan(project.contacts);
    const declared = probed ? await probed.parameters() : [];
    // Every read of events is built before any runs. The root stands in each once, beside a part per
    // declared type and per listed parameter, so a root whose own query fits can make one pass what
    // ClickHouse parses (256 KiB): checked as a whole, the 400 at `root` of a filter too large (ADR
    // 0058), not a 500. Without a root nothing is checked: the refusal would name a root not given.
    const queries = filterErrorsAs400(() => {
      const contacts = root ? rootContacts(projectId, root, now) : undefined;
      const sampled = probed && sampledEvents(scopeOf([probed.uid]), plan.applied ? plan.buckets : undefined, contacts);
      const built = {
        volumes: types.length ? volumesQuery(scopeOf(types.map((t) => t.uid)), contacts) : undefined,
        // A system type is not in the declared list (probe volumes are per declared type): its own count is read for its section.
        probedVolume: probed && !types.some((t) => t.uid === probed.uid) ? volumesQuery(scopeOf([probed.uid]), contacts) : undefined,
        values: sampled && parameterValuesRead(sampled, declared, view),
        // The band follows the whole project audience even with a root (probe rule 11); the estimate projects on the root's contacts.
        rootPopulation: probed && root ? populationQuery(projectId, root, now) : undefined,
      };
      if (root) for (const query of [built.volumes, built.probedVolume, built.values?.query]) if (query) checkedSize(query);
      return built;
    });

    const volumes = queries.volumes ? await this.reads.rows<VolumeRow>(queries.volumes) : [];
    const byType = new Map(volumes.map((v) => [v.event_type, v]));
    const eventTypes = types.map((t) => {
      const count = Number(byType.get(t.uid)?.events ?? 0);
      const days = typeDays.get(t.uid)!;
      return { uid: t.uid, label: t.name, count, received: count > 0, ...lastSeen(count, Number(byType.get(t.uid)?.last), view), effectiveWindowDays: days, windowLimitedByRetention: days < window.days, retentionDays: t.retentionDays };
    });

    const probedVolume = probed && (eventTypes.find((e) => e.uid === probed.uid) ?? (await this.volumeOf(queries.probedVolume!, view)));
    const event = probed ? await this.eventSection(probed, probedVolume!, declared, queries.values!, { rootPopulation: queries.rootPopulation, project, plan, view }) : undefined;
    const received = eventTypes.filter((e) => e.received).length;
    return {
      computedAt: now.toISOString(),
      window,
      sampling: {
        applied: false,
        covers: view === 'withheld' ? 'eventTypes: count (lastSeenAt is withheld by the data mode)' : 'eventTypes: count and lastSeenAt',
        reason: 'per-type counts read every event of the window: exact, never sampled (probe rule 11)',
        parameterValues: probed ? (plan.applied ? `sampled by contact: ${sampleQualifier(plan)} of the project audience (event.sampling)` : 'not sampled: under 10,000 contacts') : 'not requested: pass `event`',
      },
      eventTypes,
      ...(event ? { event } : {}),
      ...(matched ? { datasource: { query: input.datasource!, matched, meaning: `events ${matched.map((d) => `"${d.name}"`).join(' or ')} produced (probe rule 6)` } } : {}),
      summary: `${received} of ${types.length} declared event type${types.length === 1 ? '' : 's'} received events in the last ${window.days} days${window.clamped ? ` (asked ${window.requestedDays}, clamped by the plan's ${window.planLookBackDays}-day look-back)` : ''}${root ? ' from contacts matching the filter' : ''}${matched ? ` from ${matched.map((d) => `"${d.name}"`).join(' or ')}` : ''}; counts are exact.`,
    };
  }

  /** The probed type: a declared one, or one Meld writes itself (`_sms_*`, ADR 0336) with its fixed parameters. */
  private probedType(uid: string, declared: ReadonlyArray<{ uid: string; id: string; name: string; retentionDays: number | null }>): ProbedType | undefined {
    const found = declared.find((t) => t.uid === uid);
    if (found) return { uid: found.uid, name: found.name, retentionDays: found.retentionDays, parameters: () => this.catalogue.listParameters(found) };
    const system = SYSTEM_EVENT_TYPES.find((t) => t.uid === uid);
    return system && { uid: system.uid, name: system.name, retentionDays: null, parameters: async () => [...system.parameters] };
  }

  private async volumeOf(query: Sql, view: ContactDataView): Promise<{ count: number } & LastSeen> {
    const [row] = await this.reads.rows<VolumeRow>(query);
    const count = Number(row?.events ?? 0);
    return { count, ...lastSeen(count, Number(row?.last), view) };
  }

  private async population(query: Sql): Promise<Population> {
    const row = await this.reads.row(query);
    const contacts = row.get('contacts') ?? 0;
    return { contacts, scanned: (plan) => (plan.applied ? (row.get(bandColumn(plan.buckets)) ?? 0) : contacts) };
  }

  private async eventSection(
    type: ProbedType,
    volume: { count: number } & LastSeen,
    declared: readonly DeclaredParameter[],
    values: ParameterValuesRead,
    c: { rootPopulation?: Sql; project: Population; plan: SamplingPlan; view: ContactDataView },
  ): Promise<NonNullable<ComputedVolumes['event']>> {
    const population = c.rootPopulation ? await this.population(c.rootPopulation) : c.project;
    const measure = { plan: c.plan, population: population.contacts, scanned: population.scanned(c.plan), piiAccess: c.view };
    const parameters = await eventParameters(this.reads, values, declared, measure);
    const listed = parameters.filter((p) => p.values);
    return {
      uid: type.uid,
      count: volume.count,
      lastSeenAt: volume.lastSeenAt,
      ...(volume.lastSeenAtOmitted ? { lastSeenAtOmitted: volume.lastSeenAtOmitted } : {}),
      parameters,
      ...(listed.length === 0 ? { parametersOmitted: declared.length ? 'no parameter of this type can be listed: each says why in valuesOmitted' : 'this event type declares no parameters' } : {}),
      sampling: { applied: c.plan.applied, fraction: c.plan.fraction, buckets: c.plan.buckets, band: c.plan.band, scaled: c.plan.applied, minReliableCount: c.plan.minReliableCount, unit: 'contacts', scanned: measure.scanned, population: measure.population },
    };
  }
}

