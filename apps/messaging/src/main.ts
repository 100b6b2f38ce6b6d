import { exitOnStartupError, runMeldApp } from '@meld/platform';
import { appDefinition } from './app.definition';

runMeldApp(appDefinition).catch(exitOnStartupError);
