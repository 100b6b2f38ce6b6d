import { z } from 'zod';

/**
 * Parses the environment with a zod schema and fails fast with one line per bad
 * variable, so a misconfigured pod dies at start with a message that names the
 * variable instead of failing later on first use.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}

const url = (protocols: string[]) =>
  z.string().refine((v) => {
    try {
      return protocols.includes(new URL(v).protocol.replace(':', ''));
    } catch {
      return false;
    }
  }, `must be a URL with scheme ${protocols.join(' or ')}`);

/** Variables shared by every app; each app picks the ones it needs. */
export const envVars = {
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  host: z.string().default('127.0.0.1'),
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  postgresUrl: url(['postgres', 'postgresql']),
  redisUrl: url(['redis', 'rediss']),
  /** Longest wait for one Redis command on a request path (ADR 0122). */
  redisTimeoutMs: z.coerce.number().int().min(50).max(30_000).default(1000),
  clickhouseUrl: url(['http', 'https']),
  clickhouseDb: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier').default('meld'),
  kafkaBrokers: z
    .string()
    .min(1)
    .transform((v) => v.split(',').map((b) => b.trim()).filter(Boolean)),
  smscUrl: url(['smpp']),
  httpUrl: url(['http', 'https']),
};
