import { startAppUnderTest } from '@meld/fixtures';
import { appDefinition } from '../src/app.definition';

/** The audience app in-process on the test stores, ready. */
export const startAudience = () => startAppUnderTest(appDefinition);
