export * from './principal';
export * from './principal.guard';
export * from './tokens';
