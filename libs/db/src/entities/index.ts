import { AttributeEntity } from './attribute.entity';
import { DataSourceEntity, MESSAGING_CONNECTOR } from './data-source.entity';
import { EventParameterEntity, EventTypeEntity } from './event-type.entity';
import { OrganizationEntity } from './organization.entity';
import { ProjectEntity } from './project.entity';
import { SenderCountryEntity, SenderEntity } from './sender.entity';
import { TokenEntity } from './token.entity';
import { UserEntity } from './user.entity';
import { WebhookEntity } from './webhook.entity';

export {
  AttributeEntity,
  DataSourceEntity,
  MESSAGING_CONNECTOR,
  EventParameterEntity,
  EventTypeEntity,
  OrganizationEntity,
  ProjectEntity,
  SenderCountryEntity,
  SenderEntity,
  TokenEntity,
  UserEntity,
  WebhookEntity,
};

// Every TypeORM entity, listed explicitly so the SWC build and Jest need no glob loading.
export const entities: Function[] = [
  OrganizationEntity,
  ProjectEntity,
  DataSourceEntity,
  TokenEntity,
  UserEntity,
  AttributeEntity,
  EventTypeEntity,
  EventParameterEntity,
  SenderEntity,
  SenderCountryEntity,
  WebhookEntity,
];
