import { MAX_PATH_PARAM_LENGTH } from '@meld/platform';

/**
 * Why no public route matched: a path segment longer than any path parameter may be (a
 * parameter over `maxParamLength` matches no route, so a 1,100-digit phone search fell to the
 * catch-all) is a 414 saying so; anything else is a 404 naming the method and path. The long
 * segment is not quoted: it is the caller's data (a phone number, an email).
 */
export function unknownPath(method: string, url: string): { status: 404 | 414; message: string } {
  const path = url.split('?')[0];
  if (path.split('/').some((segment) => segment.length > MAX_PATH_PARAM_LENGTH)) {
    return { status: 414, message: `a path segment is longer than ${MAX_PATH_PARAM_LENGTH} characters: no identifier, phone number or email this API takes is that long` };
  }
  return { status: 404, message: `no such endpoint: ${method} ${path}` };
}
