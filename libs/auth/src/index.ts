export * from './access';
export * from './channels';
export * from './data-levels';
export * from './contact-data';
export * from './principal';
export * from './principal.guard';
export * from './tokens';
export * from './password';
