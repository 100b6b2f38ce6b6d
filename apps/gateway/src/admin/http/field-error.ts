import { BadRequestException } from '@nestjs/common';

/**
 * A rule checked after parsing (it needs the database: merging attributes, project UIDs,
 * the default sender) fails with the same 400 shape as parseInput, naming the field.
 */
export function fieldError(path: string, message: string): BadRequestException {
  return new BadRequestException({ message: `invalid body: ${path}: ${message}`, details: { fields: [{ path, message }] } });
}
