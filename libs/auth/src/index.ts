export * from './access';
export * from './channels';
export * from './data-levels';
export * from './principal';
export * from './principal.guard';
export * from './principal-keys';
export * from './tokens';
export * from './password';
