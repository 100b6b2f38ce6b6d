// Every migration in order. Files are named <timestamp>-<name>.ts and never edited once committed.
export const migrations: Function[] = [];
