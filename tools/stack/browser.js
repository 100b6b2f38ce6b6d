'use strict';
// The headless browser of the browser tests: Debian's chromium, installed (as root, apt-get) the
// first time a test needs it, so `npm test` works on a fresh machine. playwright-core drives it and
// never downloads a browser of its own (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 at install time).
const fs = require('node:fs');
const { ensurePackage } = require('./packages');

const CHROMIUM = '/usr/bin/chromium';

/** Path of the chromium executable, installing the Debian package first when it is missing. */
async function ensureChromium(log) {
  await ensurePackage({ pkg: 'chromium', what: `the browser ${CHROMIUM}`, present: () => fs.existsSync(CHROMIUM) }, log);
  return CHROMIUM;
}

/**
 * Launch arguments of a quiet headless chromium: no sandbox (tests run as root), no GPU, no
 * background traffic to Google. Its fresh profile folder goes to playwright's
 * launchPersistentContext(dir), which passes it as --user-data-dir (and refuses it in args).
 */
function chromiumArgs() {
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
}

module.exports = { CHROMIUM, ensureChromium, chromiumArgs };

if (require.main === module) {
  ensureChromium((line) => console.log(line)).then(
    (file) => console.log(`chromium: ${file}`),
    (err) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
