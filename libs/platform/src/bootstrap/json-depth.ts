import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/**
 * Deepest nesting of arrays and objects a JSON request body may have (ADR 0113). JSON.parse
 * itself copes with any depth, but what runs after it (zod, JSON.stringify, a recursive walk)
 * overflows the stack on a body of a few kilobytes of brackets: a 500, or a crashed worker.
 * No Meld body needs more than a handful of levels (filters included).
 */
export const MAX_JSON_DEPTH = 32;

/** True when `text` (JSON) nests arrays and objects deeper than `max`; one pass, no parse. */
export function jsonTooDeep(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

export function jsonTooDeepMessage(max: number = MAX_JSON_DEPTH): string {
  return `request body nests arrays and objects deeper than ${max} levels`;
}

/**
 * Replaces the JSON body parser of the app with Fastify's own (same prototype-poisoning
 * protection) behind the depth check: a 400 naming the limit before anything parses.
 */
export function limitJsonDepth(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify = app.getHttpAdapter().getInstance();
  const parse = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser('application/json', { bodyLimit }, (request, body, done) => {
    const text = body.toString('utf8');
    if (jsonTooDeep(text)) {
      done(Object.assign(new Error(jsonTooDeepMessage()), { statusCode: 400 }), undefined);
      return;
    }
    parse(request as Parameters<typeof parse>[0], text, done);
  });
}
