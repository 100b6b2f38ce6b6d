import { join } from 'node:path';
import { testEnv } from '@meld/testing';

const { startApps } = require(join(__dirname, '../../../tools/cli/apps.js'));
const stack = require(join(__dirname, '../../../tools/stack'));
const ROOT = join(__dirname, '../../..');

export type System = { base: string; brokers: string; stop(): Promise<void> };

/**
 * The eight apps as processes (as `npm start` runs them) on `gatewayPort` and the ports after
 * it, with a private Kafka broker: on the shared test broker the consumer groups would first
 * work through every message other tests produced. Logs go to .stack/logs/e2e-<name>.
 */
export async function startSystem(name: string, gatewayPort: number, env: NodeJS.ProcessEnv = {}): Promise<System> {
  testEnv();
  const brokerName = `${name}-e2e-${process.pid}`;
  const { brokers } = await stack.startBroker({ name: brokerName });
  const supervisor = startApps({
    env: { ...process.env, LOG_LEVEL: 'warn', MELD_KAFKA_BROKERS: brokers, MELD_RATE_LIMIT_NAMESPACE: brokerName, ...env },
    gatewayPort,
    logDir: join(ROOT, `.stack/logs/e2e-${name}`),
  });
  const stop = async () => {
    await supervisor.stop();
    await stack.stopBroker(brokerName);
  };
  try {
    await supervisor.ready(90000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { base: `http://127.0.0.1:${gatewayPort}`, brokers, stop };
}
