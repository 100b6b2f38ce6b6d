import { Tenancy1795262000000 } from './1795262000000-tenancy';
import { DataSourceUid1795263100000 } from './1795263100000-data-source-uid';

// Every migration in order. Files are named <timestamp>-<name>.ts and never edited once committed.
export const migrations: Function[] = [Tenancy1795262000000, DataSourceUid1795263100000];
