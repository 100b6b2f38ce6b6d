import { startAppUnderTest } from '@meld/fixtures';
import { appDefinition } from '../src/app.definition';

/** The ingest app in-process on the test stores, ready; `overrides` replace env values. */
export const startIngest = (overrides: Record<string, string> = {}) => startAppUnderTest(appDefinition, overrides);
