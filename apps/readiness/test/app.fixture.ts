import { startAppUnderTest } from '@meld/fixtures';
import { appDefinition } from '../src/app.definition';

/** The readiness app in-process on the test stores, ready. */
export const startReadiness = () => startAppUnderTest(appDefinition);
