/**
 * Names of Object.prototype members and friends: as attribute, parameter, asset or field names
 * they break every lookup in a plain object (`{}[name]` finds the prototype's member). Every
 * input corpus includes them (issue 13; lookups keyed by user data use a Map or a
 * null-prototype object).
 */
export const HOSTILE_NAMES = ['constructor', '__proto__', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'] as const;
