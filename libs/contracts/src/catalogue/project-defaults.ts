/** Defaults of a new project's configuration; `generalConfig` given at creation is deep-merged over them. */
export const CHANNEL_GROUPS = ['channelDefaults', 'channelSms', 'channelEmail', 'channelRcs', 'channelWhatsapp'] as const;
export type ChannelGroup = (typeof CHANNEL_GROUPS)[number];
export const COMPLIANCE_POLICIES = ['basic', 'opt-out', 'opt-in'] as const;

export interface ChannelConfig {
  defaultCompliancePolicy: (typeof COMPLIANCE_POLICIES)[number];
  optInKeywords: string[] | null;
  optOutKeywords: string[] | null;
  autoCreateContactsOnInbounds: boolean;
  autoCreateContactsOnOutbounds: boolean;
  marketingOptOutScope: string;
  marketingOptInScope: string;
}

const channel = (overrides: Partial<ChannelConfig> = {}): ChannelConfig => ({
  defaultCompliancePolicy: 'basic',
  optInKeywords: null,
  optOutKeywords: null,
  autoCreateContactsOnInbounds: false,
  autoCreateContactsOnOutbounds: false,
  marketingOptOutScope: 'per_channel',
  marketingOptInScope: 'per_channel',
  ...overrides,
});

export function defaultGeneralConfig(): Record<ChannelGroup, ChannelConfig> {
  return {
    channelDefaults: channel(),
    channelSms: channel({ defaultCompliancePolicy: 'opt-out', optOutKeywords: ['STOP', 'UNSUBSCRIBE'], optInKeywords: ['START'] }),
    channelEmail: channel({ defaultCompliancePolicy: 'opt-out' }),
    channelRcs: channel({ defaultCompliancePolicy: 'opt-out' }),
    channelWhatsapp: channel({ defaultCompliancePolicy: 'opt-in' }),
  };
}

export function defaultAttributionConfig() {
  return { hoursSmsCampaignSent: 72, hoursOtherCampaignSent: 72, hoursCampaignCta: 24, hoursCampaignOpen: 24, hoursFindOutboundSms: 72 };
}
