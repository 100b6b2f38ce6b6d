'use strict';
// Argument parsing shared by the `meld` verbs: node:util parseArgs, strict (an unknown flag is
// an error naming it), `--help` answered by meld.js before any verb runs.
const { parseArgs } = require('node:util');

/** A mistake in how a verb was called: meld.js prints it with the verb's help and exits 2. */
class UsageError extends Error {}

/**
 * `options` as node:util parseArgs takes them. With `positionals` false, any positional is an
 * error too. Tokens after `--` are returned apart (`rest`) when `passThrough` is set.
 */
function parseVerbArgs(verb, args, { options = {}, positionals = false, passThrough = false } = {}) {
  const cut = passThrough ? args.indexOf('--') : -1;
  const own = cut >= 0 ? args.slice(0, cut) : args;
  const rest = cut >= 0 ? args.slice(cut + 1) : [];
  try {
    const parsed = parseArgs({ args: own, options, strict: true, allowPositionals: positionals });
    return { values: parsed.values, positionals: parsed.positionals, rest };
  } catch (err) {
    throw new UsageError(`meld ${verb}: ${err.message}`);
  }
}

/** `--help` / `-h` among a verb's own arguments (not after `--`, which belongs to another tool). */
function wantsHelp(args) {
  const cut = args.indexOf('--');
  return (cut >= 0 ? args.slice(0, cut) : args).some((a) => a === '--help' || a === '-h');
}

module.exports = { UsageError, parseVerbArgs, wantsHelp };
