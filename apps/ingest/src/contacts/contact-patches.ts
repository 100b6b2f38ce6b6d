import { dict } from '@meld/contracts';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { type AttributeRule, normaliseValue, valueError, type AttributeValue } from './attribute-rules';
import { type AttributePatch, type ItemErrors, type NewAttribute, parseAttributes } from './contact-item';
import { SourceContactsRepository } from './source-contacts.repository';

export interface PatchInput {
  attributes: Record<string, unknown>;
  /** Names the caller handles itself (`_user_id`, the event fields). */
  skip: ReadonlySet<string>;
  /** The item already failed on a field the caller checks (its `_user_id`): its attributes are checked, but it creates none (ADR 0035). */
  failed?: boolean;
}

export type PatchResult = { ok: true; patch: AttributePatch } | { ok: false; errors: ItemErrors };

/**
 * Catalogue checks of contact attributes, shared by contact writes and the `_user_data` of
 * events (one code path, as the design asks). Inside the write's transaction: creates the
 * custom attributes of the valid items only (a new name's first value is checked against the
 * type it would get before it counts as created: a refused item creates nothing, ADR 0035),
 * then re-checks those values against the rules that stand (another batch may have created
 * the same name with another type a moment earlier).
 */
@Injectable()
export class ContactPatches {
  constructor(private readonly contacts: SourceContactsRepository) {}

  async prepare(tx: EntityManager, projectId: string, inputs: PatchInput[]): Promise<PatchResult[]> {
    const catalogue = await this.contacts.catalogue(projectId, tx);
    const pending = new Map<string, AttributeRule>();
    const created: NewAttribute[] = [];
    const results: PatchResult[] = inputs.map((input) => {
      const parsed = parseAttributes(input.attributes, catalogue, pending, input.skip);
      if (Object.keys(parsed.errors).length > 0 || input.failed) return { ok: false, errors: parsed.errors };
      for (const attr of parsed.created) {
        if (pending.has(attr.uid)) continue;
        pending.set(attr.uid, { ...attr, enabled: true, internal: false, reserved: false });
        created.push(attr);
      }
      return { ok: true, patch: parsed.patch };
    });
    if (created.length === 0) return results;
    const standing = await this.contacts.createAttributes(tx, projectId, created);
    return results.map((result) => {
      if (!result.ok) return result;
      const errors: ItemErrors = dict();
      const patch: AttributePatch = dict(result.patch);
      for (const [name, value] of Object.entries(result.patch)) {
        const rule = standing.get(name);
        if (!rule || value === null) continue;
        const err = valueError(rule, value);
        if (err) errors[name] = [err];
        else patch[name] = normaliseValue(rule, value as AttributeValue);
      }
      return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, patch };
    });
  }
}
