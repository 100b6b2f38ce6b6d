'use strict';
// `meld keys`: fresh secrets of one deployment, as env lines (for .env, a Secret, a vault):
// the admin token, the gateway's principal master key and each internal app's own principal
// key, derived from it (ADR 0101, ADR 0256).
const { createSecretKey, hkdfSync, randomBytes } = require('node:crypto');
const apps = require('../../../libs/contracts/src/apps.json');

const help = 'usage: meld keys\n  prints fresh secrets of one deployment as env lines: admin token, principal master key (gateway) and one principal key per internal app (ADR 0256)';

// The derivation of libs/auth's derivePrincipalKey, here because the CLI runs before any build;
// tools/cli/keys.spec.ts checks that both give the same keys.
const appKey = (master, app) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `meld principal key: ${app}`, 32)).toString('base64url');
const keyEnv = (app) => `MELD_PRINCIPAL_KEY_${app.toUpperCase().replace(/-/g, '_')}`;

async function run(args = []) {
  require('../args').parseVerbArgs('keys', args);
  const master = createSecretKey(randomBytes(32));
  console.log(
    [
      `MELD_ADMIN_TOKEN=${randomBytes(32).toString('base64url')}`,
      `MELD_PRINCIPAL_MASTER_KEY=${master.export().toString('base64url')}`,
      ...Object.keys(apps)
        .filter((app) => app !== 'gateway')
        .map((app) => `${keyEnv(app)}=${appKey(master, app)}`),
    ].join('\n'),
  );
  return 0;
}

module.exports = { run, help };
