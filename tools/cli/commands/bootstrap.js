'use strict';
// `meld bootstrap [--json]`: a ready-to-use tenant on the running gateway, through the admin
// API: an organization, a project, one API data source and a product token with every
// scope. Prints the ids and the two tokens (shown once: they are not stored in clear).
const { adminClient, expectOk } = require('./admin');
const { UsageError, parseVerbArgs } = require('../args');

function usage() {
  return [
    'usage: meld bootstrap [--json] [--name ORG] [--plan s|m|l|xl] [--project UID]',
    '  creates an organization (plan xl unless --plan), a project, an API data source and a',
    '  product token with every scope; prints ids and tokens (add --json for machines)',
    '  --project is checked before anything is created: a UID the API would refuse (malformed,',
    '  or taken) creates nothing. A later failure (the gateway gone) names the organization it',
    '  leaves, which the admin API cannot delete.',
  ].join('\n');
}

/** The admin API's rule for a project UID (apps/gateway/src/admin/shared/slug.ts; a spec keeps the two equal). */
const UID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const UID_RULE = 'must be 1-64 lowercase letters, digits or dashes, not starting or ending with a dash';

function parseArgs(args) {
  // Strict: an option without its value (`--plan`, `--name --json`) is an error naming it, never a call.
  return parseVerbArgs('bootstrap', args, {
    options: { json: { type: 'boolean', default: false }, name: { type: 'string', default: 'Local organization' }, plan: { type: 'string', default: 'xl' }, project: { type: 'string' } },
  }).values;
}

/** Refuses a --project UID another project holds, before the organization exists (the API would answer 409 after). */
async function checkProjectFree(client, uid) {
  const { status } = await client.call('GET', `projects/${encodeURIComponent(uid)}`);
  if (status === 404) return;
  if (status >= 200 && status < 300) throw new Error(`--project: project uid "${uid}" already exists; nothing was created`);
  throw new Error(`GET /admin/v1/projects/${uid} answered ${status}; nothing was created`);
}

async function bootstrap(options, client = adminClient()) {
  // A --project the API refuses is refused before anything exists: it left an organization with no project behind.
  if (options.project !== undefined && !UID_PATTERN.test(options.project)) throw new UsageError(`meld bootstrap: --project ${UID_RULE} (got ${JSON.stringify(options.project)})`);
  // The scope list comes from the gateway, so this file never holds a copy that drifts.
  const scopes = (await expectOk(client, 'GET', 'scopes')).entity;
  if (options.project !== undefined) await checkProjectFree(client, options.project);
  const organization = (await expectOk(client, 'POST', 'organizations', { name: options.name, plan: options.plan })).entity;
  let project;
  let dataSource;
  let token;
  try {
    project = (await expectOk(client, 'POST', `organizations/${organization.id}/projects`, { name: 'Local project', ...(options.project ? { uid: options.project } : {}) })).entity;
    dataSource = await expectOk(client, 'POST', `projects/${project.uid}/datasources`, { name: 'API', connector: 'api' });
    token = await expectOk(client, 'POST', `organizations/${organization.id}/tokens`, { scopes, projects: [project.uid], label: 'meld bootstrap' });
  } catch (err) {
    const left = project ? `organization ${organization.id} and its project ${project.uid} were` : `organization ${organization.id} was`;
    throw new Error(`${err.message}; ${left} created and stay (the admin API deletes no organization)`);
  }
  return {
    gateway: client.base,
    organization: { id: organization.id, name: organization.name, plan: organization.plan },
    project: { id: project.id, uid: project.uid, name: project.name },
    dataSource: { id: dataSource.entity.id, uid: dataSource.entity.uid, tokenId: dataSource.metadata.tokenId, token: dataSource.metadata.token },
    productToken: { id: token.entity.id, token: token.metadata.token, scopes: token.entity.scopes },
  };
}

async function run(args) {
  const options = parseArgs(args);
  const result = await bootstrap(options);
  if (options.json) {
    console.log(JSON.stringify(result, null, 2));
    return 0;
  }
  const { gateway, organization, project, dataSource, productToken } = result;
  console.log(
    [
      `organization   ${organization.id}  (${organization.name}, plan ${organization.plan})`,
      `project        ${project.uid}  (${project.id})`,
      `data source    ${dataSource.id}  (${dataSource.uid})`,
      `  token        ${dataSource.token}`,
      `product token  ${productToken.token}  (${productToken.scopes.length} scopes)`,
      '',
      'The tokens are shown once. Try:',
      `  curl -H "Authorization: Bearer ${productToken.token}" ${gateway}/v1/project/${project.uid}`,
      `  curl -H "Authorization: Bearer ${dataSource.token}" ${gateway}/v1/project/${project.uid}/datasource/${dataSource.id}/stream`,
    ].join('\n'),
  );
  return 0;
}

module.exports = { run, bootstrap, UID_PATTERN, UID_RULE, get help() {
  return usage();
} };
