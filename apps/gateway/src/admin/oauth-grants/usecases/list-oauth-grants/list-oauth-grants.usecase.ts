import { isoWithOffset, timestamp } from '@meld/api';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { type OAuthGrantRow, OAuthGrantsRepository } from '../../oauth-grants.repository';

export const OAuthGrantSchema = z
  .object({
    id: z.string(),
    clientId: z.string(),
    clientName: z.string(),
    userId: z.string(),
    userEmail: z.string(),
    scopes: z.array(z.string()),
    projects: z.array(z.string()).describe('project UIDs the user granted'),
    resource: z.string().nullable().describe('RFC 8707 resource the tokens are bound to; null: unbound'),
    createdAt: timestamp(),
    revokedAt: timestamp().nullable(),
  })
  .meta({ id: 'OAuthGrant' });

const toResource = (g: OAuthGrantRow): z.infer<typeof OAuthGrantSchema> => ({
  ...g,
  createdAt: isoWithOffset(g.createdAt),
  revokedAt: g.revokedAt ? isoWithOffset(g.revokedAt) : null,
});

/** Every approval a user of the organization gave an OAuth client, revoked ones included. */
@Injectable()
export class ListOAuthGrants {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly grants: OAuthGrantsRepository,
  ) {}

  async execute({ organizationId }: { organizationId: string }) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const grants = await this.grants.listByOrganization(organization.id);
    return { entity: grants.map(toResource), metadata: { count: grants.length } };
  }
}
