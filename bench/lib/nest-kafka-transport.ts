/**
 * What issue 14 item 7 proposed, built just far enough to be measured (ADR 0237): a NestJS
 * `CustomTransportStrategy` over libs/kafka's runners, each message (or each batch a sink
 * runner takes) dispatched to an `@EventPattern` handler of a controller through Nest's own
 * handler machinery (the `Server` base class's pattern lookup, the listeners controller's proxy
 * with its guards, interceptors, pipes and exception filters, an observable per call), against
 * the same runners calling the same handler directly (per message: the scenario's libs/kafka
 * variant; per batch: `openSinkDirect`).
 *
 * `@nestjs/microservices` is not a dependency of Meld (ADR 0237), so it is loaded at run time
 * and typed here by the few members used; bench/scenarios/kafka.ts says how to run these
 * variants (a throwaway copy of the tree with the package added to its node_modules).
 */
import { Controller, Inject, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Consumer } from 'kafkajs';
import { Registry } from 'prom-client';
import { isObservable, lastValueFrom, type Observable } from 'rxjs';
import type { ZodType } from 'zod';
import { createConsumerRunner, createProducer, createSinkRunner, sinkHandler, topicHandler, type ConsumerRunner } from '../../libs/kafka/src';

/** What the kafka scenario needs of a variant: a way to produce, the consumer to instrument, a close. */
export interface BenchPipe<T> {
  send(messages: Array<{ key: string; value: T }>): Promise<void>;
  consumer: Consumer;
  close(): Promise<void>;
}

export interface PipeOptions<T> {
  brokers: string[];
  topic: string;
  groupId: string;
  schema: ZodType<T>;
  maxWaitTimeInMs: number;
  /** The handler's work: what every variant calls once per message. */
  handle(value: T): void;
}

type RunnerFactory = (dispatch: (data: unknown) => Promise<void>) => ConsumerRunner;
type NestEventHandler = (data: unknown, ctx: unknown) => Promise<unknown>;

/** The members of `@nestjs/microservices` this file uses. */
interface Microservices {
  Server: abstract new () => {
    propagatesEventHandlerErrors: boolean;
    getHandlerByPattern(pattern: string): NestEventHandler | null;
    transformToObservable(result: unknown): Observable<unknown>;
  };
  EventPattern(pattern: string): MethodDecorator;
  BaseRpcContext: new (args: unknown[]) => unknown;
}

function loadMicroservices(): Microservices {
  try {
    return require('@nestjs/microservices') as Microservices;
  } catch (err) {
    throw new Error(`the nest-transport variants need @nestjs/microservices, which Meld does not install (ADR 0237); see bench/scenarios/kafka.ts: ${String(err)}`);
  }
}

/** Per batch: libs/kafka's sink runner writes each batch it took to the handler itself. */
export function openSinkDirect<T>(o: PipeOptions<T>): Promise<BenchPipe<T>> {
  return openWithRunner(o, sinkRunner(o, async (values) => values.forEach((v) => o.handle(v as T))));
}

/** Per message through Nest: the runner hands each value to an `@EventPattern(topic)` handler. */
export function openNestTransport<T>(o: PipeOptions<T>): Promise<BenchPipe<T>> {
  return openWithNest(o, 'message', (dispatch) => messageRunner(o, dispatch));
}

/** Per batch through Nest: the sink runner hands each batch to an `@EventPattern(topic)` handler. */
export function openNestTransportBatch<T>(o: PipeOptions<T>): Promise<BenchPipe<T>> {
  return openWithNest(o, 'batch', (dispatch) => sinkRunner(o, (values) => dispatch(values)));
}

function messageRunner<T>(o: PipeOptions<T>, dispatch: (value: unknown) => Promise<void>): ConsumerRunner {
  return createConsumerRunner({
    ...runnerOptions(o),
    handlers: [topicHandler({ topic: o.topic, schema: o.schema, handle: (m) => dispatch(m.value) })],
  });
}

function sinkRunner<T>(o: PipeOptions<T>, write: (values: unknown[]) => Promise<void>): ConsumerRunner {
  return createSinkRunner({
    ...runnerOptions(o),
    sink: sinkHandler({ topic: o.topic, schema: o.schema, toRow: (value) => value, write }),
  });
}

function runnerOptions<T>(o: PipeOptions<T>) {
  return { brokers: o.brokers, clientId: 'bench-runner', groupId: o.groupId, metrics: new Registry(), maxWaitTimeInMs: o.maxWaitTimeInMs };
}

async function openWithRunner<T>(o: PipeOptions<T>, runner: ConsumerRunner): Promise<BenchPipe<T>> {
  const producer = await connectedProducer(o);
  await runner.start();
  return {
    send: (messages) => producer.send(o.topic, messages),
    consumer: runner.consumer,
    close: async () => {
      await runner.stop();
      await producer.disconnect();
    },
  };
}

async function openWithNest<T>(o: PipeOptions<T>, mode: 'message' | 'batch', create: RunnerFactory): Promise<BenchPipe<T>> {
  const ms = loadMicroservices();
  const transport = new (runnerTransport(ms))(o.topic, create);
  const app: INestMicroservice = await NestFactory.createMicroservice(handlerModule(ms, o, mode), { strategy: transport, logger: false });
  const producer = await connectedProducer(o);
  await app.listen();
  return {
    send: (messages) => producer.send(o.topic, messages),
    consumer: transport.runner!.consumer,
    close: async () => {
      await app.close();
      await producer.disconnect();
    },
  };
}

async function connectedProducer<T>(o: PipeOptions<T>) {
  const producer = createProducer({ brokers: o.brokers, clientId: 'bench-runner', metrics: new Registry() });
  await producer.connect();
  return producer;
}

/**
 * The transport: `listen` starts a fresh runner whose handler dispatches to the Nest handler
 * of the topic's pattern and resolves once that handler's result (value, promise or
 * observable) completes, as Nest's own Kafka server does; a failure reaches the runner, which
 * keeps its retries, dead-lettering, per-key order and in-order commits.
 */
function runnerTransport(ms: Microservices) {
  return class RunnerTransport extends ms.Server {
    runner: ConsumerRunner | undefined;

    constructor(
      private readonly topic: string,
      private readonly create: RunnerFactory,
    ) {
      super();
      this.propagatesEventHandlerErrors = true;
    }

    listen(callback: (err?: unknown) => void): void {
      this.runner = this.create((data) => this.dispatch(data));
      this.runner.start().then(() => callback(), callback);
    }

    async close(): Promise<void> {
      await this.runner?.stop();
    }

    on(): never {
      throw new Error('the bench transport emits no events');
    }

    unwrap<R>(): R {
      return this.runner as R;
    }

    private async dispatch(data: unknown): Promise<void> {
      const handler = this.getHandlerByPattern(this.topic);
      if (!handler) throw new Error(`no @EventPattern handler for ${this.topic}`);
      const result = await handler(data, new ms.BaseRpcContext([this.topic]));
      if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
    }
  };
}

const HANDLE = Symbol('bench handler work');

/** A module with one controller: the `@EventPattern(topic)` handler the transport dispatches to. */
function handlerModule<T>(ms: Microservices, o: PipeOptions<T>, mode: 'message' | 'batch') {
  @Controller()
  class MessageHandlers {
    constructor(@Inject(HANDLE) private readonly handle: (value: T) => void) {}

    @ms.EventPattern(o.topic)
    onMessage(value: T): void {
      this.handle(value);
    }
  }

  @Controller()
  class BatchHandlers {
    constructor(@Inject(HANDLE) private readonly handle: (value: T) => void) {}

    @ms.EventPattern(o.topic)
    onBatch(values: T[]): void {
      for (const value of values) this.handle(value);
    }
  }

  @Module({ controllers: [mode === 'message' ? MessageHandlers : BatchHandlers], providers: [{ provide: HANDLE, useValue: o.handle }] })
  class BenchTransportModule {}
  return BenchTransportModule;
}
