/**
 * Names of Object.prototype members: user input keyed into a plain object by one of these
 * reads or replaces the prototype's member instead of data (ADR 0124). Every input corpus
 * and fast-check arbitrary of names (attributes, parameters, filter keys, query fields,
 * asset names) includes them.
 */
export const PROTOTYPE_NAMES = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__'] as const;
