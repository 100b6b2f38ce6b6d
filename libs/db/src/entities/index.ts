// Every TypeORM entity, listed explicitly so the SWC build and Jest need no glob loading.
export const entities: Function[] = [];
