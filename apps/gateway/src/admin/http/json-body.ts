import { type ArgumentMetadata, BadRequestException, Body, Injectable, type PipeTransform } from '@nestjs/common';
import { jsonTooDeep, jsonTooDeepMessage, parseInput } from '@meld/platform';
import type { z } from 'zod';
import { refuseUnstorableText } from './storable-body';

/**
 * Validates the body against the zod schema given to `@JsonBody(schema)` with platform's
 * parseInput: the 400 every app gives (`details.fields` = [{path, message}]); then any text
 * Postgres could not store as sent is that field's 400 too.
 */
@Injectable()
export class ZodBodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (!metadata.schema) return value;
    const body = parseInput(metadata.schema as unknown as z.ZodType, parsed(value));
    refuseUnstorableText(body);
    return body;
  }
}

/** A body that reached us unparsed (a raw content-type parser upstream) is parsed here, never trusted. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string' && !Buffer.isBuffer(value)) return value;
  const text = value.toString();
  if (jsonTooDeep(text)) throw new BadRequestException(`invalid body: ${jsonTooDeepMessage()}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequestException('invalid body: not JSON');
  }
}

/** The body, validated by `schema`, which also documents it in OpenAPI (one source for both). */
export const JsonBody = (schema: z.ZodType) => Body({ schema, pipes: [ZodBodyPipe] });
