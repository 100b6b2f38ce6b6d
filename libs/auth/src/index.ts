export * from './access';
export * from './channels';
export * from './data-levels';
export * from './principal';
export * from './principal.guard';
export * from './tokens';
export * from './password';
export * from './project-of';
