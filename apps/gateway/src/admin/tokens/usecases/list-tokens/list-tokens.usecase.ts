import { Injectable } from '@nestjs/common';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { toTokenResource } from '../../token.resource';
import { TokensRepository } from '../../tokens.repository';

export interface ListTokensCommand {
  organizationId: string;
}

/** Every token of the organization (product and data-source), revoked ones included, never a secret. */
@Injectable()
export class ListTokens {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly tokens: TokensRepository,
  ) {}

  async execute({ organizationId }: ListTokensCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    const tokens = await this.tokens.listByOrganization(organization.id);
    return { entity: tokens.map(toTokenResource), metadata: { count: tokens.length } };
  }
}
