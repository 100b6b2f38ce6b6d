import { startAppUnderTest } from '@meld/fixtures';
import { appDefinition } from '../src/app.definition';

/** The audience app in-process on the test stores (or `overrides`, e.g. a proxied Postgres), ready. */
export const startAudience = (overrides: Record<string, string> = {}) => startAppUnderTest(appDefinition, overrides);
