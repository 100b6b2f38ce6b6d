import { errorSummary, LoggableError } from '@meld/contracts';
import { metricsRegistry } from '@meld/platform';
import { Logger } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';

// `smpp` ships no types (the SMSC simulator in tools/smsc uses it the same way).
const smpp = require('smpp');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Pdu = Record<string, any>;

/** The SMSC refused the message for good (submit_sm_resp with an error status): the SMS is `failed`. Its message is a status, loggable. */
export class SubmitRefused extends LoggableError {
  constructor(readonly commandStatus: number) {
    super(`SMSC refused the message (command_status 0x${commandStatus.toString(16)})`);
  }
}

/** Anything else (no session, session lost, no answer in time, SMSC busy): the queue retries. Its messages are constants, loggable. */
export class SubmitUnavailable extends LoggableError {}

/** Statuses that mean "try later", not "this message is wrong" (SMPP 3.4 §5.1.3). */
const TRANSIENT_STATUSES = new Set([0x14 /* ESME_RMSGQFUL */, 0x58 /* ESME_RTHROTTLED */, 0x08 /* ESME_RSYSERR */]);
/** The SMSC no longer holds our bind (it restarted or failed over behind a connection kept open): the session is lost, not the message. */
const ESME_RINVBNDSTS = 0x04;

export interface Submission {
  source: string;
  destination: string;
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  messagesCount: number;
}

export interface Receipt {
  messageId: string;
  /** The `stat:` of the receipt text in upper case (DELIVRD, UNDELIV, EXPIRED, …), or its message_state TLV as one. */
  stat: string;
  error?: string;
}

export interface SmscOptions {
  url: string;
  /** submit_sm in flight at once; more wait (ADR 0153). */
  window?: number;
  /** enquire_link every this many ms while bound (ADR 0153); default 30 s. */
  enquireLinkMs?: number;
  /**
   * How long an enquire_link may wait for its enquire_link_resp, and a connection for its
   * bind_transceiver_resp, before the session is taken as dead: closed, its submits failed for
   * the queue to retry, and bound again with backoff (ADR 0348). Default 10 s, as a submit_sm_resp.
   */
  enquireLinkTimeoutMs?: number;
  /** How long a submit_sm waits for its submit_sm_resp; default 10 s (ADR 0153). */
  responseTimeoutMs?: number;
  onReceipt(receipt: Receipt): Promise<void>;
  /** A mobile-originated message (ADR 0183); answered after it resolves, like a receipt. */
  onInbound(sms: Inbound): Promise<unknown>;
}

export interface Inbound {
  from: string;
  to: string;
  text: string;
}

/**
 * A sender's alias as the submit_sm source address (SMPP 3.4 §5.2.5-5.2.8): a number written
 * with `+` goes as its digits, TON 1 (international) / NPI 1 (E.164), since an address holds no
 * `+`; an alphanumeric alias as TON 5 / NPI 0; other digits (a short code, a number written
 * without `+`) as TON 0 (unknown) / NPI 0, for the SMSC to read (ADR 0153).
 */
function sourceAddress(alias: string): { source_addr: string; source_addr_ton: number; source_addr_npi: number } {
  if (/^\+[0-9]+$/.test(alias)) return { source_addr: alias.slice(1), source_addr_ton: 1, source_addr_npi: 1 };
  if (/^[0-9]+$/.test(alias)) return { source_addr: alias, source_addr_ton: 0, source_addr_npi: 0 };
  return { source_addr: alias, source_addr_ton: 5, source_addr_npi: 0 };
}

/** A mobile-originated deliver_sm (not a receipt): its text from short_message, or message_payload when that is empty. */
export function inboundOf(pdu: Pdu): Inbound {
  const short = pdu.short_message?.message;
  const body = typeof short === 'string' && short.length ? short : pdu.message_payload?.message;
  return { from: String(pdu.source_addr ?? ''), to: String(pdu.destination_addr ?? ''), text: typeof body === 'string' ? body : '' };
}

/**
 * The fields of a receipt text (SMPP 3.4 appendix B) that are read, named in any case, before
 * its `text:` (the message's first characters, which could hold anything).
 */
const RECEIPT_FIELDS = {
  id: /(?:^|[^a-z0-9])id:([^\s,;]+)/i,
  stat: /(?:^|[^a-z0-9])stat:([a-z]+)/i,
  err: /(?:^|[^a-z0-9])err:(\w+)/i,
};
const RECEIPT_TEXT_FIELD = /(?:^|[^a-z0-9])text:/i;

/** The message_state TLV (SMPP 3.4 §5.2.28) as the `stat:` of appendix B. */
const MESSAGE_STATES = new Map([
  [1, 'ENROUTE'],
  [2, 'DELIVRD'],
  [3, 'EXPIRED'],
  [4, 'DELETED'],
  [5, 'UNDELIV'],
  [6, 'ACCEPTD'],
  [7, 'UNKNOWN'],
  [8, 'REJECTD'],
]);

/**
 * A delivery receipt from a deliver_sm (esm_class bit 2), or null for any other deliver_sm and
 * for a receipt naming no message or no state. The id is the receipted_message_id TLV, else the
 * text's `id:`; the state is the text's `stat:` (in any case), else the message_state TLV: SMSCs
 * differ in which of them they fill (ADR 0153).
 */
export function receiptOf(pdu: Pdu): Receipt | null {
  if ((pdu.esm_class & 0x04) === 0) return null;
  const message: string = typeof pdu.short_message?.message === 'string' ? pdu.short_message.message : '';
  const fields = message.split(RECEIPT_TEXT_FIELD, 1)[0]!;
  const messageId: string | undefined = pdu.receipted_message_id || RECEIPT_FIELDS.id.exec(fields)?.[1];
  const stat = RECEIPT_FIELDS.stat.exec(fields)?.[1]?.toUpperCase() ?? MESSAGE_STATES.get(pdu.message_state);
  if (!messageId || !stat) return null;
  const err = RECEIPT_FIELDS.err.exec(fields)?.[1];
  return { messageId, stat, ...(err && err !== '000' ? { error: `err:${err}` } : {}) };
}

/** The session as readiness reports it (ADR 0348). */
export interface SmscState {
  bound: boolean;
  /** When the session bound (bound) or when it was lost, or the client started (not bound). */
  since: number;
  /**
   * Why it is not bound, from the last failure: an error code, a bind refusal's command status,
   * the SMSC's unbind. Never the URL, nor an error's text (ADR 0338: the URL carries the credentials).
   */
  reason?: string;
}

// Created by the first client that starts: an `api` process, which has no session, exports neither.
const sessionBound = () =>
  (metricsRegistry.getSingleMetric('meld_messaging_smsc_session_bound') as Gauge | undefined) ??
  new Gauge({ name: 'meld_messaging_smsc_session_bound', help: '1 while the SMPP session to the SMSC is bound, 0 otherwise (delivery processes only, ADR 0348)', registers: [metricsRegistry] });
const reconnects = () =>
  (metricsRegistry.getSingleMetric('meld_messaging_smsc_reconnects_total') as Counter | undefined) ??
  new Counter({ name: 'meld_messaging_smsc_reconnects_total', help: 'Connection attempts to the SMSC after a session closed or a connect or bind failed, each step of the backoff (ADR 0348)', registers: [metricsRegistry] });

/**
 * One SMPP 3.4 session to the SMSC (ADR 0153): bound as transceiver so receipts come back on
 * it, enquire_link keeps it (and NAT state) alive, a lost session is re-bound with backoff,
 * and at most `window` submits wait for their response at a time. Receipts are answered
 * after `onReceipt` stored them, so a crash before that makes the SMSC deliver them again.
 */
export class SmscClient {
  private readonly log = new Logger('smsc');
  private session: Pdu | null = null;
  private bound = false;
  /** See SmscState. */
  private since = Date.now();
  private reason?: string;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer?: NodeJS.Timeout;
  /** enquire_link every `enquireLinkMs` while bound. */
  private keepAliveTimer?: NodeJS.Timeout;
  /** The deadline of the enquire_link, or of the connection's bind, awaiting its answer. */
  private deadlineTimer?: NodeJS.Timeout;
  private inFlight = 0;
  private readonly windowWaiters: Array<() => void> = [];
  private readonly pending = new Set<(err: Error) => void>();
  private readonly boundWaiters = new Set<() => void>();
  /** Receipts and inbound messages being stored: stop() lets them finish and be answered. */
  private readonly handling = new Set<Promise<unknown>>();

  constructor(private readonly options: SmscOptions) {}

  start(): void {
    this.stopped = false;
    this.since = Date.now();
    sessionBound().set(0);
    reconnects();
    this.connect();
  }

  state(): SmscState {
    return { bound: this.bound, since: this.since, ...(this.bound || !this.reason ? {} : { reason: this.reason }) };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.clearLinkTimers();
    while (this.handling.size) await Promise.allSettled([...this.handling]);
    const session = this.session;
    this.session = null;
    if (this.bound) sessionBound().set(0);
    this.bound = false;
    if (!session) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        session.destroy();
        resolve();
      }, 1000);
      session.unbind(() => session.close(() => (clearTimeout(timer), resolve())));
    });
  }

  /** Submits one SMS; resolves with the SMSC's message id. */
  async submit(s: Submission): Promise<string> {
    await this.waitBound();
    await this.acquireWindow();
    try {
      return await this.submitNow(s);
    } finally {
      this.releaseWindow();
    }
  }

  private submitNow(s: Submission): Promise<string> {
    const session = this.session;
    if (!session || !this.bound) return Promise.reject(new SubmitUnavailable('no SMSC session'));
    const message = { data_coding: s.encoding === 'UCS-2' ? 8 : 0 };
    // A text of several parts goes in message_payload: the SMSC splits it (SMPP 3.4 §4.4.1).
    const body = s.messagesCount > 1 ? { message_payload: s.text } : { short_message: s.text };
    return new Promise<string>((resolve, reject) => {
      const fail = (err: Error) => {
        clearTimeout(timer);
        this.pending.delete(fail);
        reject(err);
      };
      const timer = setTimeout(() => {
        fail(new SubmitUnavailable('no submit_sm_resp in time'));
        // A silent SMSC is found now rather than at the next enquire_link (ADR 0348).
        this.probe(session);
      }, this.options.responseTimeoutMs ?? 10_000).unref();
      this.pending.add(fail);
      const sent = session.submit_sm({ ...sourceAddress(s.source), destination_addr: s.destination.replace(/^\+/, ''), dest_addr_ton: 1, dest_addr_npi: 1, registered_delivery: 1, ...message, ...body }, (resp: Pdu) => {
        clearTimeout(timer);
        this.pending.delete(fail);
        if (resp.command_status === 0) resolve(String(resp.message_id));
        else if (TRANSIENT_STATUSES.has(resp.command_status)) reject(new SubmitUnavailable(`SMSC busy (command_status 0x${resp.command_status.toString(16)})`));
        else if (resp.command_status === ESME_RINVBNDSTS) {
          reject(new SubmitUnavailable('SMSC says the session is not bound'));
          this.rebind(session);
        }
        else reject(new SubmitRefused(resp.command_status));
      });
      if (sent === false) fail(new SubmitUnavailable('SMSC session not writable'));
    });
  }

  private waitBound(timeoutMs = 5000): Promise<void> {
    if (this.bound) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.boundWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.boundWaiters.delete(done);
        reject(new SubmitUnavailable('SMSC not bound'));
      }, timeoutMs).unref();
      this.boundWaiters.add(done);
    });
  }

  private acquireWindow(): Promise<void> {
    if (this.inFlight < (this.options.window ?? 10)) {
      this.inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.windowWaiters.push(resolve));
  }

  private releaseWindow(): void {
    const next = this.windowWaiters.shift();
    if (next) next();
    else this.inFlight--;
  }

  private get deadlineMs(): number {
    return this.options.enquireLinkTimeoutMs ?? 10_000;
  }

  private clearLinkTimers(): void {
    clearInterval(this.keepAliveTimer);
    clearTimeout(this.deadlineTimer);
    this.keepAliveTimer = this.deadlineTimer = undefined;
  }

  /**
   * Arms the deadline of an answer the session owes: when it passes, the SMSC is taken as
   * stalled (the TCP connection open, nothing answered) and the session is destroyed, which
   * goes through onClose: submits failed for the queue to retry, the gauge at 0, the backoff
   * (ADR 0348). Checked once more after the I/O callbacks: an event loop held up past the
   * deadline runs timers before reading an answer that has arrived meanwhile.
   */
  private expectAnswer(session: Pdu, missing: string): void {
    clearTimeout(this.deadlineTimer);
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (this.deadlineTimer !== timer || this.session !== session) return;
          this.reason = `no ${missing} within ${this.deadlineMs} ms`;
          this.log.warn(`${this.reason}: the SMSC is not answering, closing the session`);
          session.destroy();
        }),
      this.deadlineMs,
    ).unref();
    this.deadlineTimer = timer;
  }

  /** The deadline armed by expectAnswer is met. */
  private answered(): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }

  /** The SMSC answered as if the session were not bound: it is closed (onClose fails its other submits for a retry) and bound again. */
  private rebind(session: Pdu): void {
    if (this.session !== session) return;
    this.reason = 'the SMSC lost the bind (ESME_RINVBNDSTS)';
    this.log.warn(`${this.reason}: closing the session to bind again`);
    session.destroy();
  }

  /** An enquire_link on the bound session, unless one is already awaiting its answer. */
  private probe(session: Pdu): void {
    if (this.session !== session || !this.bound || this.deadlineTimer) return;
    this.expectAnswer(session, 'enquire_link_resp');
    session.enquire_link({}, () => {
      if (this.session === session) this.answered();
    });
  }

  private connect(): void {
    if (this.stopped) return;
    const url = new URL(this.options.url);
    // enquire_link is ours, not the package's auto_enquire_link_period: its answer has a deadline.
    const session = smpp.connect({ url: `smpp://${url.hostname}:${url.port || 2775}` });
    this.session = session;
    // The TCP connect, then the bind, each within the deadline: an SMSC that takes the connection and answers nothing is stalled too.
    this.expectAnswer(session, 'TCP connection');
    session.on('connect', () => {
      this.expectAnswer(session, 'bind_transceiver_resp');
      session.bind_transceiver({ system_id: decodeURIComponent(url.username || 'meld'), password: decodeURIComponent(url.password || 'meld') }, (resp: Pdu) => {
        if (this.session !== session) return;
        this.answered();
        if (resp.command_status !== 0) {
          this.reason = `bind refused (command_status 0x${resp.command_status.toString(16)})`;
          this.log.warn(this.reason);
          session.close();
          return;
        }
        this.bound = true;
        this.since = Date.now();
        this.reason = undefined;
        sessionBound().set(1);
        this.attempt = 0;
        this.keepAliveTimer = setInterval(() => this.probe(session), this.options.enquireLinkMs ?? 30_000).unref();
        this.log.log('bound as transceiver');
        for (const w of [...this.boundWaiters]) w();
      });
    });
    session.on('deliver_sm', (pdu: Pdu) => this.onDeliver(session, pdu));
    // Answer the SMSC's own keep-alive and unbind, as SMPP requires.
    session.on('enquire_link', (pdu: Pdu) => session.send(pdu.response()));
    session.on('unbind', (pdu: Pdu) => {
      this.reason = 'unbound by the SMSC';
      session.send(pdu.response());
      session.close();
    });
    session.on('error', (err: NodeJS.ErrnoException) => {
      // The class and code only (ADR 0338): a PDU parse error's text can quote what the SMSC sent.
      if (this.skipUnreadable(session)) return void this.log.warn(`a PDU from the SMSC could not be read, skipped: ${errorSummary(err)}`);
      this.reason = `session error ${err.code ?? '(no code)'}`;
      this.log.warn(`session error: ${errorSummary(err)}`);
    });
    session.on('close', () => this.onClose(session));
  }

  /**
   * After the `smpp` package (0.5.1, pinned) failed to parse a PDU whose frame it read whole, it
   * reads nothing more from the connection (its reader stays busy): the session would be bound
   * and deaf until a deadline closed it, and the SMSC would send the same PDU after the next
   * bind. Its reader is reset to go on after that PDU, which stays unanswered (the SMSC resends
   * or drops it). A socket error, or a frame too short or too long to skip, is left to close the
   * session. True when the PDU was skipped (ADR 0153).
   */
  private skipUnreadable(session: Pdu): boolean {
    const length: unknown = session._command_length;
    if (session.socket.destroyed || session._busy !== true || typeof length !== 'number' || length < 16) {
      if (!session.socket.destroyed) session.destroy();
      return false;
    }
    session._command_length = null;
    session._busy = false;
    setImmediate(() => session._extractPDUs());
    return true;
  }

  private onDeliver(session: Pdu, pdu: Pdu): void {
    const receipt = receiptOf(pdu);
    // A receipt we cannot read is acknowledged and dropped; only a non-receipt is a mobile-originated message.
    if (!receipt && (pdu.esm_class & 0x04) !== 0) return void session.send(pdu.response());
    const stored = receipt ? this.options.onReceipt(receipt) : this.options.onInbound(inboundOf(pdu));
    this.handling.add(stored);
    void stored.finally(() => this.handling.delete(stored)).catch(() => undefined);
    stored.then(
      () => session.send(pdu.response()),
      (err: Error) => {
        // The class and code only (ADR 0338): a store's error can quote the row, a phone number included.
        this.log.warn(`${receipt ? 'receipt' : 'inbound message'} not stored, asking the SMSC to resend: ${errorSummary(err)}`);
        session.send(pdu.response({ command_status: 0x64 /* ESME_RX_T_APPN: temporary */ }));
      },
    );
  }

  private onClose(session: Pdu): void {
    if (this.session !== session) return;
    this.clearLinkTimers();
    if (this.bound) {
      this.since = Date.now();
      // An error or the SMSC's unbind, when one came first, says more.
      this.reason ??= 'session closed';
      sessionBound().set(0);
    }
    this.bound = false;
    this.session = null;
    // A submit without its response may or may not have been accepted: the queue retries it (ADR 0153).
    for (const fail of [...this.pending]) fail(new SubmitUnavailable('SMSC session lost'));
    if (this.stopped) return;
    const delay = Math.min(500 * 2 ** this.attempt++, 10_000);
    this.log.warn(`session closed, reconnecting in ${delay} ms`);
    this.reconnectTimer = setTimeout(() => {
      reconnects().inc();
      this.connect();
    }, delay);
  }
}
