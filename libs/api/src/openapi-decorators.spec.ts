import { Get } from '@nestjs/common';
import * as swagger from '@nestjs/swagger';
import { z } from 'zod';
import * as ours from './openapi-decorators';
import { ApiErrors, ApiSuccess } from './openapi';

// Meld's decorators stand in for @nestjs/swagger's so apps boot without loading it (ADR 0355):
// the document is built by SwaggerModule from the metadata they leave, so it must be the same,
// key for key. Each case decorates a fresh controller with both and compares everything under
// the package's `swagger/` keys, on the class and on its route methods.

type Decorators = (lib: typeof ours) => (MethodDecorator | ClassDecorator)[];

function swaggerMetadata(target: object): Record<string, unknown> {
  const keys = Reflect.getOwnMetadataKeys(target).filter((k) => String(k).startsWith('swagger/'));
  return Object.fromEntries(keys.map((k) => [k, Reflect.getOwnMetadata(k, target)]));
}

/** A controller with two routes; `onMethod` decorates `a`, `onClass` the class (after the routes, as TypeScript does). */
function decorate(lib: typeof ours, onMethod: Decorators, onClass: Decorators) {
  class Controller {
    a() {}
    b() {}
  }
  for (const name of ['a', 'b'] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(Controller.prototype, name)!;
    Get(name)(Controller.prototype, name, descriptor);
    if (name === 'a') Reflect.decorate(onMethod(lib) as MethodDecorator[], Controller.prototype, name, descriptor);
  }
  Reflect.decorate(onClass(lib) as ClassDecorator[], Controller);
  const p = Controller.prototype;
  return { class: swaggerMetadata(Controller), a: swaggerMetadata(p.a), b: swaggerMetadata(p.b) };
}

const lib = swagger as unknown as typeof ours;
const schema = z.object({ id: z.string() });

const cases: [string, Decorators, Decorators][] = [
  ['tags on a class and a method', (l) => [l.ApiTags('SMS')], (l) => [l.ApiTags('Audience', 'Lists')]],
  ['an excluded controller', () => [], (l) => [l.ApiExcludeController()]],
  ['bearer auth', (l) => [l.ApiBearerAuth('admin'), l.ApiBearerAuth()], () => []],
  ['operations, overriding and with undefined fields', (l) => [l.ApiOperation({ summary: 'first' }), l.ApiOperation({ summary: 'send', description: undefined, security: [] })], () => []],
  ['an operation without a summary', (l) => [l.ApiOperation({ description: 'only this' })], () => []],
  ['path parameters on a method', (l) => [l.ApiParam({ name: 'project', description: 'the project uid' }), l.ApiParam({ name: 'channel', enum: ['sms', 'email'] })], () => []],
  ['path parameters on a class', () => [], (l) => [l.ApiParam({ name: 'project', description: 'uid', required: true }), l.ApiParam({ name: 'n', enum: [1, 2], schema: { minimum: 1 } })]],
  ['query parameters', (l) => [l.ApiQuery({ name: 'status', required: false, enum: ['pending', 'delivered'] }), l.ApiQuery({ name: 'limit', required: false, description: '1–200' }), l.ApiQuery({ name: 'flag', enum: [true, false] })], (l) => [l.ApiQuery({ name: 'cursor' })]],
  ['headers', (l) => [l.ApiHeader({ name: 'Idempotency-Key', required: false, description: 'unique per project' }), l.ApiHeader({ name: 'X-Kind', enum: ['a'], example: 'a' })], (l) => [l.ApiHeader({ name: 'X-Class', description: 'on every route', schema: { type: 'integer' } })]],
  ['responses, merged per status', (l) => [l.ApiResponse({ status: 201, description: 'created' }), l.ApiResponse({ status: 400, description: 'one reason' }), l.ApiResponse({ status: 400, description: 'another' }), l.ApiResponse({ description: '' }), l.ApiResponse({ status: 200, standardSchema: schema, headers: { 'X-A': { description: 'a', schema: { type: 'integer' } } } })], (l) => [l.ApiResponse({ status: 429, description: 'rate limited' })]],
];

describe('Meld OpenAPI decorators write what @nestjs/swagger writes', () => {
  it.each(cases)('%s', (_name, onMethod, onClass) => {
    expect(decorate(ours, onMethod, onClass)).toStrictEqual(decorate(lib, onMethod, onClass));
  });

  it('the response helpers (ApiErrors, ApiSuccess) leave metadata', () => {
    class C {
      @Get()
      @ApiSuccess(200, schema, 'the page')
      @ApiErrors(400, 401, 429)
      a() {}
    }
    expect(Object.keys(swaggerMetadata(C.prototype.a)['swagger/apiResponse'] as object)).toEqual(['200', '400', '401', '429']);
  });
});
