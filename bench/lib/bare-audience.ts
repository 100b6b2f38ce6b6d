/**
 * The gateway bench's floor: a bare Fastify process (no Nest, no principal check, no logs or
 * metrics) answering the audience routes the bench measures with the same store work as the
 * audience app: the project read's two Postgres queries, the contact lookup's query and the
 * count's ClickHouse query, its catalogue read once and kept in memory. Run as its own process
 * (`node -r @swc-node/register bench/lib/bare-audience.ts`) with PORT, MELD_POSTGRES_URL,
 * MELD_CLICKHOUSE_URL, MELD_CLICKHOUSE_DB and BARE_ORGANIZATION_ID / BARE_PROJECT_ID set.
 */
import Fastify from 'fastify';
import { Pool } from 'pg';
import { createClickHouse } from '../../libs/clickhouse/src';
import { audienceCount, parseAudienceFilter, type FilterCatalogue } from '../../libs/filters/src';

const env = process.env;
const organizationId = env.BARE_ORGANIZATION_ID!;
const projectId = env.BARE_PROJECT_ID!;

async function main(): Promise<void> {
  const pg = new Pool({ connectionString: env.MELD_POSTGRES_URL, max: 10 });
  const ch = createClickHouse({ url: env.MELD_CLICKHOUSE_URL!, database: env.MELD_CLICKHOUSE_DB! });
  const [attributes, parameters] = await Promise.all([
    pg.query(`SELECT uid, type, multivalue, slot FROM attributes WHERE project_id = $1`, [projectId]),
    pg.query(`SELECT t.uid AS event_type, p.parameter AS uid, p.data_type FROM event_types t LEFT JOIN event_parameters p ON p.event_type_id = t.id WHERE t.project_id = $1`, [projectId]),
  ]);
  const eventTypes = new Map<string, Array<{ uid: string; dataType: string }>>();
  for (const p of parameters.rows as Array<{ event_type: string; uid: string | null; data_type: string | null }>) {
    const list = eventTypes.get(p.event_type) ?? [];
    if (p.uid !== null) list.push({ uid: p.uid, dataType: p.data_type ?? 'string' });
    eventTypes.set(p.event_type, list);
  }
  const catalogue = { attributes: attributes.rows, eventTypes: [...eventTypes].map(([uid, params]) => ({ uid, parameters: params })) } as FilterCatalogue;

  const app = Fastify();
  app.get('/v1/project/:project', async (_req, reply) => {
    const project = (await pg.query(`SELECT * FROM projects WHERE id = $1 AND organization_id = $2 LIMIT 1`, [projectId, organizationId])).rows[0];
    const organization = (await pg.query(`SELECT * FROM organizations WHERE id = $1 LIMIT 1`, [organizationId])).rows[0];
    if (!project || !organization) return reply.code(404).send({ message: 'project not found' });
    return { entity: { id: project.uid, name: project.name, createdAt: project.created_at }, metadata: { organization: { id: organization.id, name: organization.name } } };
  });
  app.get('/v1/project/:project/audience/user/:userId', async (req, reply) => {
    const { userId } = req.params as { userId: string };
    const { rows } = await pg.query(
      `WITH ids AS (SELECT m.audience_id AS id FROM audience_members m WHERE m.project_id = $1 AND m.user_id = $2
                    UNION SELECT c.id FROM audience_contacts c WHERE c.project_id = $1 AND c.attributes->>'_user_id' = $2)
       SELECT c.id, c.attributes, c.datasources, c.ds_contact_ids, count(*) OVER ()::int AS matches
         FROM audience_contacts c JOIN ids ON ids.id = c.id WHERE c.project_id = $1
        ORDER BY c.updated_at DESC, c.id DESC LIMIT 1`,
      [projectId, userId],
    );
    if (!rows[0]) return reply.code(404).send({ message: 'contact not found' });
    return { entity: { id: rows[0].id, ...rows[0].attributes }, metadata: { matches: rows[0].matches } };
  });
  app.post('/v1/project/:project/audience/count', async (req) => {
    const root = parseAudienceFilter((req.body as { root: unknown }).root, catalogue);
    const [row] = await ch.query<{ matching: string }>(audienceCount({ projectId, root, counts: [['matching']] }));
    return { metadata: { totalHits: Number(row?.matching ?? 0) } };
  });
  await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
  process.once('SIGTERM', () => void app.close().then(() => Promise.all([pg.end(), ch.close()])).then(() => process.exit(0)));
}

main().catch((err: unknown) => {
  process.stderr.write(`bare-audience: ${String(err)}\n`);
  process.exit(1);
});
