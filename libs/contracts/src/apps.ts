import apps from './apps.json';

/** The eight apps, their default ports and the stores each needs: one table read by apps, CLI, tests and manifests. */
export type AppName = keyof typeof apps;
export type AppStore = 'postgres' | 'redis' | 'clickhouse' | 'kafka';
export const APPS = apps as Record<AppName, { port: number; stores: AppStore[] }>;
export const APP_NAMES = Object.keys(apps) as AppName[];
export const INTERNAL_APPS = APP_NAMES.filter((a) => a !== 'gateway');

/** `identity-merge` → `MELD_IDENTITY_MERGE_URL`: where the gateway finds an app. */
export function appUrlEnv(app: AppName): string {
  return `MELD_${app.toUpperCase().replace(/-/g, '_')}_URL`;
}
