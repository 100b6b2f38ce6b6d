type Responses = Record<string, { description?: string; headers?: Record<string, unknown> } | undefined>;
type Document = { paths: Record<string, Record<string, { responses: Responses }>> };

/**
 * The operations of an OpenAPI document (`method path`) that do not document the 503 of
 * Postgres not answering with its Retry-After (ADR 0360), but for those `except` names.
 */
export function operationsWithoutPostgres503(doc: Document, except: readonly string[] = []): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, answer: op.responses['503'] })))
    .filter(({ name, answer }) => !except.includes(name) && !(answer?.description?.includes('Postgres') && answer.headers?.['Retry-After']))
    .map(({ name }) => name);
}
