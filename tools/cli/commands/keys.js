'use strict';
// `meld keys`: fresh secrets of one deployment, as env lines (for .env, a Secret, a vault):
// the admin token and the Ed25519 pair of the signed principal (ADR 0101, ADR 0102).
const { generateKeyPairSync, randomBytes } = require('node:crypto');

/** The last 32 bytes of an Ed25519 key's DER are the raw key the apps read (base64url). */
const raw = (der) => der.subarray(der.length - 32).toString('base64url');

const help = 'usage: meld keys\n  prints fresh secrets of one deployment as env lines: admin token and principal key pair (ADR 0101)';

async function run(args = []) {
  require('../args').parseVerbArgs('keys', args);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  console.log(
    [
      `MELD_ADMIN_TOKEN=${randomBytes(32).toString('base64url')}`,
      `MELD_PRINCIPAL_PRIVATE_KEY=${raw(privateKey.export({ format: 'der', type: 'pkcs8' }))}`,
      `MELD_PRINCIPAL_PUBLIC_KEY=${raw(publicKey.export({ format: 'der', type: 'spki' }))}`,
    ].join('\n'),
  );
  return 0;
}

module.exports = { run, help };
