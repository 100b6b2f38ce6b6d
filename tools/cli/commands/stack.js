'use strict';
module.exports = { run: (args) => require('../../stack').runStackCommand(args) };
