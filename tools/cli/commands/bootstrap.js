'use strict';
// `meld bootstrap [--json]`: a ready-to-use tenant on the running gateway, through the admin
// API: an organization, a project, one API data source and a product token with every
// scope. Prints the ids and the two tokens (shown once: they are not stored in clear).
const { adminClient, expectOk } = require('./admin');
const { parseVerbArgs } = require('../args');

function usage() {
  return [
    'usage: meld bootstrap [--json] [--name ORG] [--plan s|m|l|xl] [--project UID]',
    '  creates an organization (plan xl unless --plan), a project, an API data source and a',
    '  product token with every scope; prints ids and tokens (add --json for machines)',
  ].join('\n');
}

function parseArgs(args) {
  // Strict: an option without its value (`--plan`, `--name --json`) is an error naming it, never a call.
  return parseVerbArgs('bootstrap', args, {
    options: { json: { type: 'boolean', default: false }, name: { type: 'string', default: 'Local organization' }, plan: { type: 'string', default: 'xl' }, project: { type: 'string' } },
  }).values;
}

async function bootstrap(options, client = adminClient()) {
  // The scope list comes from the gateway, so this file never holds a copy that drifts.
  const scopes = (await expectOk(client, 'GET', 'scopes')).entity;
  const organization = (await expectOk(client, 'POST', 'organizations', { name: options.name, plan: options.plan })).entity;
  const project = (
    await expectOk(client, 'POST', `organizations/${organization.id}/projects`, { name: 'Local project', ...(options.project ? { uid: options.project } : {}) })
  ).entity;
  const dataSource = await expectOk(client, 'POST', `projects/${project.uid}/datasources`, { name: 'API', connector: 'api' });
  const token = await expectOk(client, 'POST', `organizations/${organization.id}/tokens`, { scopes, projects: [project.uid], label: 'meld bootstrap' });
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

module.exports = { run, bootstrap, get help() {
  return usage();
} };
