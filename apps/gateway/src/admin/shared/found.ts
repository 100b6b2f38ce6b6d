import { NotFoundException } from '@nestjs/common';

/** 404 naming what was looked for, so an operator sees which id of the path is wrong. */
export function found<T>(value: T | null | undefined, what: string, key: string): T {
  if (value === null || value === undefined) throw new NotFoundException(`${what} "${key}" not found`);
  return value;
}
