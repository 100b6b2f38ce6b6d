import { Tenancy1795262000000 } from './1795262000000-tenancy';
import { DataSourceUid1795263100000 } from './1795263100000-data-source-uid';
import { IngestWrite1795264000000 } from './1795264000000-ingest-write';
import { Audience1795265000000 } from './1795265000000-audience';
import { Consent1795266000000 } from './1795266000000-consent';
import { Segments1795267000000 } from './1795267000000-segments';
import { AttributeSlots1795268000000 } from './1795268000000-attribute-slots';
import { OAuth1795269500000 } from './1795269500000-oauth';
import { OAuthTokenResource1795269510000 } from './1795269510000-oauth-token-resource';
import { SmsMessages1795269600000 } from './1795269600000-sms-messages';
import { SmsLinks1795269650000 } from './1795269650000-sms-links';
import { WebhookDeliveries1795269610000 } from './1795269610000-webhook-deliveries';
import { SmsOutboxTopic1795269620000 } from './1795269620000-sms-outbox-topic';
import { WebhookDeliveriesPruning1795269660000 } from './1795269660000-webhook-deliveries-pruning';
import { OutboxNotify1795269721100 } from './1795269721100-outbox-notify';
import { OutboxTrace1795269721200 } from './1795269721200-outbox-trace';
import { SmsHotTablesStorage1795269727600 } from './1795269727600-sms-hot-tables-storage';
import { SmsWebhookOutbox1795269730000 } from './1795269730000-sms-webhook-outbox';
import { SmsSendJob1795269740000 } from './1795269740000-sms-send-job';
import { SmsReceiptsHot1795269750000 } from './1795269750000-sms-receipts-hot';
import { RemergeRequests1795269760000 } from './1795269760000-remerge-requests';
import { OAuthCodeRedirectSent1795269770000 } from './1795269770000-oauth-code-redirect-sent';
import { OutboxDeadLetters1795269780000 } from './1795269780000-outbox-dead-letters';
import { AudienceMemberFirstAt1795269790000 } from './1795269790000-audience-member-first-at';
import { AudienceEmailIcuIndex1795269800000 } from './1795269800000-audience-email-icu-index';
import { SmsRedaction1795269810000 } from './1795269810000-sms-redaction';

// Every migration in order. Files are named <timestamp>-<name>.ts and never edited once committed.
export const migrations: Function[] = [Tenancy1795262000000, DataSourceUid1795263100000, IngestWrite1795264000000, Audience1795265000000, Consent1795266000000, Segments1795267000000, AttributeSlots1795268000000, OAuth1795269500000, OAuthTokenResource1795269510000, SmsMessages1795269600000, WebhookDeliveries1795269610000, SmsOutboxTopic1795269620000, SmsLinks1795269650000, WebhookDeliveriesPruning1795269660000, OutboxNotify1795269721100, OutboxTrace1795269721200, SmsHotTablesStorage1795269727600, SmsWebhookOutbox1795269730000, SmsSendJob1795269740000, SmsReceiptsHot1795269750000, RemergeRequests1795269760000, OAuthCodeRedirectSent1795269770000, OutboxDeadLetters1795269780000, AudienceMemberFirstAt1795269790000, AudienceEmailIcuIndex1795269800000, SmsRedaction1795269810000];
