import { Injectable } from '@nestjs/common';
import { type AudienceCatalogue, FilterCatalogueRepository } from './filter-catalogue.repository';

/** How long a cached catalogue is trusted for what a filter naming known names cannot reveal: a type changed, a name removed (ADR 0232). */
export const CATALOGUE_TTL_MS = 10_000;
/** Projects kept; the one read longest ago is dropped first (keys are project ids from the URL). */
const MAX_PROJECTS = 1_000;

type Entry = { readAt: number; rows: Promise<AudienceCatalogue> };

/** A project's filter catalogue, as `FilterCatalogueRepository` reads it, held in memory per project (ADR 0232). */
@Injectable()
export class FilterCatalogueCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly repository: FilterCatalogueRepository) {}

  /** The cached catalogue (read at most `CATALOGUE_TTL_MS` ago), or a new read. */
  cached(projectId: string, now = Date.now()): Promise<AudienceCatalogue> {
    const entry = this.entries.get(projectId);
    if (entry && now - entry.readAt < CATALOGUE_TTL_MS) return entry.rows;
    return this.reload(projectId, now);
  }

  /**
   * The catalogue entries of these attribute uids, in order (undefined: unknown). One reload
   * before an unknown one is reported: it may have been declared since the cached read (ADR 0232).
   */
  async attributes(projectId: string, uids: readonly string[]): Promise<Array<AudienceCatalogue['attributes'][number] | undefined>> {
    const find = (catalogue: AudienceCatalogue) => {
      const byUid = new Map(catalogue.attributes.map((a) => [a.uid, a]));
      return uids.map((uid) => byUid.get(uid));
    };
    const found = find(await this.cached(projectId));
    return found.every(Boolean) ? found : find(await this.reload(projectId));
  }

  /**
   * A new read, which later `cached` calls share; a failed read is not kept. Never an older read
   * still running: it may predate a declaration the caller relies on.
   */
  reload(projectId: string, now = Date.now()): Promise<AudienceCatalogue> {
    const rows = this.repository.catalogue(projectId);
    const fresh: Entry = { readAt: now, rows };
    this.entries.delete(projectId);
    if (this.entries.size >= MAX_PROJECTS) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(projectId, fresh);
    rows.catch(() => {
      if (this.entries.get(projectId) === fresh) this.entries.delete(projectId);
    });
    return rows;
  }
}
