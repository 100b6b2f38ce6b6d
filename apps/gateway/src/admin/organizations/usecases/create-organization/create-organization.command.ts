import { z } from 'zod';
import { organizationFields as f } from '../../organization-fields';

export const CreateOrganizationBody = z
  .strictObject({
    name: f.name,
    plan: f.plan,
    apiTier: f.apiTier.optional().describe('default `standard`'),
    funds: f.funds.optional().describe('account funds; default 0'),
    prepaid: f.prepaid.optional().describe('prepaid organizations must hold funds to send; default false'),
    dataMode: f.dataMode.optional().describe('default `normal`; a project may override it'),
  })
  .meta({ id: 'CreateOrganizationBody' });

export type CreateOrganizationCommand = z.infer<typeof CreateOrganizationBody>;
