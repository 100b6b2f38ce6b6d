import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** topics.json as the broker and the stack manager read it (a file read, not a project import). */
export const topicsFile = JSON.parse(readFileSync(join(__dirname, '../../contracts/src/topics.json'), 'utf8')) as {
  partitions: number;
  topics: Array<{ name: string; key: string; dlq?: boolean }>;
};
