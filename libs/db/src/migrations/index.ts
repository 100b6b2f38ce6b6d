import { Tenancy1795262000000 } from './1795262000000-tenancy';

// Every migration in order. Files are named <timestamp>-<name>.ts and never edited once committed.
export const migrations: Function[] = [Tenancy1795262000000];
