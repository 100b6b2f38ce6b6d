import { METHOD_METADATA } from '@nestjs/common/constants';
import type { HeadersObject, OperationObject, SchemaObject, StandardSchemaObject } from '@nestjs/swagger';

/*
 * The @nestjs/swagger decorators Meld's controllers use, writing the same metadata under the same
 * keys, without loading @nestjs/swagger: its decorators pull in the package and es-toolkit/compat,
 * ~250 ms of CPU in every app process and ~300-500 ms in every Jest file that loads a controller,
 * while the document is built only when /openapi.json is first asked for (openapi-document.ts,
 * which loads @nestjs/swagger then). ADR 0355. The options are the subset Meld uses; a wider one
 * (types, isArray, enumName, extensions) fails the type check instead of being documented wrongly.
 * openapi-decorators.spec.ts checks each against the package's own decorator.
 */

// @nestjs/swagger's metadata keys (its constants.js, DECORATORS).
const KEYS = {
  operation: 'swagger/apiOperation',
  response: 'swagger/apiResponse',
  tags: 'swagger/apiUseTags',
  parameters: 'swagger/apiParameters',
  headers: 'swagger/apiHeaders',
  security: 'swagger/apiSecurity',
  excludeController: 'swagger/apiExcludeController',
} as const;

type EnumValues = readonly (string | number | boolean)[];
type Decorator = MethodDecorator & ClassDecorator;
type Target = object | ((...args: never[]) => unknown);
type Param = Record<string, unknown> & { schema?: object };

/** A path, query or header parameter, as Meld documents them. */
export interface ApiParameterOptions {
  name: string;
  description?: string;
  required?: boolean;
  deprecated?: boolean;
  example?: unknown;
  enum?: EnumValues;
  schema?: SchemaObject;
}

export interface ApiResponseOptions {
  status?: number | 'default';
  description?: string;
  headers?: HeadersObject;
  standardSchema?: StandardSchemaObject;
  schema?: SchemaObject;
}

function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function enumType(values: EnumValues): string {
  if (values.some((v) => typeof v === 'string')) return 'string';
  return values.some((v) => typeof v === 'boolean') ? 'boolean' : 'number';
}

/** As the package's addEnumSchema: the enum goes into the parameter's (possibly given) schema. */
function addEnumSchema(param: Param, values: EnumValues): void {
  const schema = (param.schema ?? {}) as Record<string, unknown>;
  param.schema = schema;
  schema.enum = values;
  schema.type = enumType(values);
}

function getMeta<T>(key: string, target: Target): T | undefined {
  return Reflect.getMetadata(key, target) as T | undefined;
}

/** The package's createParamDecorator: on a method, or on every route method of a controller class. */
function paramDecorator(param: Param, initial: Record<string, unknown>): Decorator {
  const options = { ...initial, ...defined(param) };
  const append = (method: Target) => Reflect.defineMetadata(KEYS.parameters, [...(getMeta<unknown[]>(KEYS.parameters, method) ?? []), options], method);
  return ((target: Target, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      append(descriptor.value);
      return descriptor;
    }
    if (typeof target === 'object') return target;
    const proto = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor') continue;
      const method = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (method && Reflect.hasMetadata(METHOD_METADATA, method)) append(method);
    }
  }) as Decorator;
}

/** The package's createMixedDecorator with an array value. */
function appendDecorator(key: string, values: unknown[]): Decorator {
  return ((target: Target, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const on = descriptor ? descriptor.value : target;
    Reflect.defineMetadata(key, [...(getMeta<unknown[]>(key, on) ?? []), ...values], on);
    return descriptor ?? target;
  }) as Decorator;
}

export function ApiTags(...tags: string[]): Decorator {
  return appendDecorator(KEYS.tags, tags);
}

export function ApiExcludeController(disable = true): ClassDecorator {
  return ((target: Target) => {
    Reflect.defineMetadata(KEYS.excludeController, [...(getMeta<unknown[]>(KEYS.excludeController, target) ?? []), disable], target);
    return target;
  }) as ClassDecorator;
}

export function ApiBearerAuth(name = 'bearer'): Decorator {
  return appendDecorator(KEYS.security, [{ [name]: [] }]);
}

export function ApiOperation(options: Partial<OperationObject>): MethodDecorator {
  const metadata = defined({ summary: '', ...options });
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(KEYS.operation, { ...getMeta<object>(KEYS.operation, descriptor.value as Target), ...metadata }, descriptor.value as Target);
    return descriptor;
  };
}

export function ApiParam(options: ApiParameterOptions): Decorator {
  const { enum: values, ...rest } = options;
  // Key order as the package's: name, in, then the options.
  const param: Param = Object.assign({ name: options.name, in: 'path' }, rest);
  if (values) addEnumSchema(param, values);
  return paramDecorator(param, { name: '', required: true });
}

export function ApiQuery(options: ApiParameterOptions): Decorator {
  const { enum: values, ...rest } = options;
  const param: Param = Object.assign({ name: options.name, in: 'query' }, rest, { type: undefined });
  if (values) addEnumSchema(param, values);
  return paramDecorator(param, { name: '', required: true });
}

export function ApiHeader(options: ApiParameterOptions): Decorator {
  const schema = { type: 'string', ...(options.example ? { example: options.example } : {}), ...(options.schema ?? {}) };
  const param: Param = defined({ name: options.name, in: 'header', description: options.description, required: options.required, deprecated: options.deprecated, schema });
  if (options.enum) param.schema = { ...param.schema, enum: options.enum, type: enumType(options.enum) };
  const onMethod = paramDecorator(param, { name: '' });
  return ((target: Target, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) return onMethod(target, key!, descriptor);
    Reflect.defineMetadata(KEYS.headers, [...(getMeta<unknown[]>(KEYS.headers, target) ?? []), param], target);
    return target;
  }) as Decorator;
}

type ResponseEntry = Record<string, unknown> & { description?: string; examples?: object };

/** The package's mergeResponseEntry: two responses for one status join their descriptions. */
function mergeResponse(existing: ResponseEntry | undefined, incoming: ResponseEntry): ResponseEntry {
  if (!existing) return incoming;
  const description = existing.description && incoming.description ? `${existing.description}\n\n${incoming.description}` : existing.description || incoming.description;
  const examples = existing.examples && incoming.examples ? { ...existing.examples, ...incoming.examples } : (incoming.examples ?? existing.examples);
  return { ...existing, ...incoming, description, ...(examples !== undefined ? { examples } : {}) };
}

/** The responses documented on a route method so far. */
export function documentedResponses(method: Target): Readonly<Record<string, ResponseEntry>> | undefined {
  return getMeta<Record<string, ResponseEntry>>(KEYS.response, method);
}

export function ApiResponse(options: ApiResponseOptions): Decorator {
  // The package sets these on the options it is given (type and isArray from getTypeIsArrayTuple,
  // undefined without a `type`), and the entry keeps them: same keys, same order.
  const o = options as ApiResponseOptions & { type?: undefined; isArray?: undefined };
  o.type = undefined;
  o.isArray = undefined;
  o.description = o.description ? o.description : '';
  const status = o.status || 'default';
  const { status: _status, ...entry } = o;
  return ((target: Target, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const on = descriptor ? descriptor.value : target;
    const responses = getMeta<Record<string, ResponseEntry>>(KEYS.response, on);
    Reflect.defineMetadata(KEYS.response, { ...responses, [status]: mergeResponse(responses?.[status], entry) }, on);
    return descriptor ?? target;
  }) as Decorator;
}
