import { issueToken } from '@meld/auth';
import { Injectable } from '@nestjs/common';
import { fieldError } from '../../../http/field-error';
import { OrganizationsRepository } from '../../../organizations/organizations.repository';
import { found } from '../../../shared/found';
import { toTokenResource } from '../../token.resource';
import { TokensRepository } from '../../tokens.repository';
import type { CreateTokenCommand } from './create-token.command';

/** A product token: only its hash is stored; the secret is in the response, once. */
@Injectable()
export class CreateToken {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly tokens: TokensRepository,
  ) {}

  async execute({ organizationId, scopes, projects, label }: CreateTokenCommand) {
    const organization = found(await this.organizations.findById(organizationId), 'organization', organizationId);
    await this.checkProjects(organization.id, projects);
    const issued = issueToken('product');
    const token = await this.tokens.create({
      organizationId: organization.id,
      kind: 'product',
      secretHash: issued.secretHash,
      prefix: issued.prefix,
      scopes: [...new Set(scopes)],
      projects: [...new Set(projects)],
      label: label ?? null,
    });
    return { entity: toTokenResource(token), metadata: { token: issued.token } };
  }

  /** `["*"]` alone, or UIDs of this organization's projects: a token never names another tenant's project. */
  private async checkProjects(organizationId: string, projects: string[]) {
    if (projects.includes('*')) {
      if (projects.length > 1) throw fieldError('projects', '"*" already means every project: list it alone');
      return;
    }
    const own = new Set((await this.organizations.listProjects(organizationId)).map((p) => p.uid));
    projects.forEach((uid, i) => {
      if (!own.has(uid)) throw fieldError(`projects[${i}]`, `no project "${uid}" in this organization`);
    });
  }
}
