#!/usr/bin/env node
'use strict';
// Stand-alone entry for the local stack: `node tools/stack/cli.js up|down|status`
// (the same as `meld stack …`, usable before `npm install`).
require('./index').runStackCommand(process.argv.slice(2));
