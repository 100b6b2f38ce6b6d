'use strict';
// SMSC simulator: a small SMPP 3.4 server for local development and tests (design doc §4,
// "SMSC simulator"). It accepts any credentials, answers submit_sm with a message id and,
// about `receiptDelayMs` later, sends a deliver_sm delivery receipt whose outcome is chosen
// by the destination number, so every SMS status can be produced on purpose:
//   ends in 99 → submit_sm_resp ESME_RSUBMITFAIL (0x45), no id, no receipt (SMS `failed`; a
//                provider refusal, which does not suppress the number)
//   ends in 98 → submit_sm_resp ESME_RINVDSTADR (0x0B), no id, no receipt (SMS `failed`; an
//                invalid destination: Meld suppresses the number, ADR 0361)
//   ends in 13 → receipt stat:UNDELIV                                        (`undelivered`)
//   ends in 14 → receipt stat:EXPIRED                                        (`expired`)
//   otherwise  → receipt stat:DELIVRD                                        (`delivered`)
//
// Behaviour worth knowing:
// - A receipt is sent only when the submit asked for one (registered_delivery bit 0 set), as a
//   real SMSC does; with registered_delivery 0 the message is accepted and nothing follows.
// - Every submit_sm is one SMS: parts of a concatenated message (UDH with esm_class 0x40,
//   sar_* TLVs) each get their own message id and receipt; nothing is reassembled.
// - Receipts go to the submitting session when it can receive (transceiver). A transmitter's
//   receipts go to a receiver/transceiver bound with the same system_id (an SMSC must not send
//   deliver_sm to a transmitter).
// - A receipt is kept for its system_id until a deliver_sm_resp with ESME_ROK acknowledges it,
//   as a real SMSC keeps them (ADR 0285): with no receiving session bound, or when the session
//   it was written to closes before answering, it is sent again as soon as a session of that
//   system_id binds; one answered with an error is sent again after `receiptRetryMs`, doubling
//   up to a minute, except ESME_RX_P_APPN (permanent), which drops it. Kept receipts live in
//   memory: a restart of the simulator, or close(), loses them.
// - Receipt dates are UTC; the receipt text is in the SMSC default alphabet (data_coding 0),
//   so characters outside GSM 03.38 in the `text:` field become '?'.
// - mo({ from, to, text }) sends a mobile-originated deliver_sm (esm_class 0, as from a handset:
//   `from` the phone in international digits, `to` a sender alias) to every session that can
//   receive, and resolves with their command_status answers; server.js exposes it over HTTP.
// - Requests it does not implement (query_sm, data_sm, cancel_sm, …) and unknown command ids
//   get generic_nack with ESME_RINVCMDID.
// - stall() makes it a hung SMSC (ADR 0348): every session, and every one that connects
//   meanwhile, keeps its TCP connection open but nothing is read from it and nothing is written
//   to it (no response, no receipt, no mobile-originated message: mo() answers []). resume()
//   reads what waited and answers it in order, then sends the receipts that came due.
// - forget() makes it an SMSC that lost its sessions' binds while their TCP connections stayed
//   open (a failover behind a proxy that kept them): each session connected now is no longer
//   bound, so its submit_sm is answered ESME_RINVBNDSTS (0x04) until it binds again. Sessions
//   connecting later are not affected.
// - malformed() writes to every session that can receive a deliver_sm receipt ending in an
//   empty message_state TLV (length 0, where SMPP 3.4 says 1), as some SMSCs send: a PDU whose
//   frame is whole and whose body the `smpp` package cannot read. Not kept, never resent.
//   malformed('oversized') writes a PDU header whose command_length is past the package's
//   maximum instead: a frame that cannot be skipped.
const crypto = require('node:crypto');
const smpp = require('smpp');

const RECEIPT_OUTCOMES = {
  // message_state values are SMPP 3.4 §5.2.28; err codes are simulator-defined.
  DELIVRD: { messageState: 2, err: '000', delivered: true },
  EXPIRED: { messageState: 3, err: '000', delivered: false },
  UNDELIV: { messageState: 5, err: '001', delivered: false },
};

/** submit_sm_resp command_status of the refusing outcomes. */
const REFUSALS = { reject: smpp.ESME_RSUBMITFAIL, invalid_destination: smpp.ESME_RINVDSTADR };

/** What the destination number asks the simulator to do: a refusal (REFUSALS) or a receipt stat. */
function outcomeFor(destination) {
  if (destination.endsWith('99')) return 'reject';
  if (destination.endsWith('98')) return 'invalid_destination';
  if (destination.endsWith('13')) return 'UNDELIV';
  if (destination.endsWith('14')) return 'EXPIRED';
  return 'DELIVRD';
}

const BIND_MODES = {
  bind_transceiver: { canSubmit: true, canReceive: true },
  bind_transmitter: { canSubmit: true, canReceive: false },
  bind_receiver: { canSubmit: false, canReceive: true },
};

const noopLogger = { info() {}, warn() {} };
/** deliver_sm_resp status that refuses a receipt for good (SMPP 3.4 §5.1.3, ESME_RX_P_APPN). */
const PERMANENT_APP_ERROR = 0x65;
const MAX_RECEIPT_RETRY_MS = 60_000;

/**
 * Start the simulator. Resolves once it listens.
 * @param {{ host?: string, port?: number, receiptDelayMs?: number, receiptRetryMs?: number,
 *           logger?: { info(obj: object, msg?: string): void, warn(obj: object, msg?: string): void },
 *           onSubmit?: (submit: { status: 'accepted' | 'rejected', messageId?: string, outcome: string, destination: string, text: string }) => void }} [options]
 *   port 0 picks a free port; logger is pino-compatible (records are plain objects, with no
 *   number or text); onSubmit sees each submit_sm whole, for tests that count what was sent.
 * @returns {Promise<{ port: number, close(): Promise<void>, mo(sms: { from: string, to: string, text: string }): Promise<number[]>,
 *           stall(): void, resume(): void, stalled(): boolean, forget(): number, malformed(kind?: 'empty-tlv' | 'oversized'): number,
 *           stats(): { submitted: number, failed: number, receiptsSent: number, receiptsResent: number, receiptsPending: number, sessions: number } }>}
 *   receiptsSent counts every deliver_sm receipt written (resends included), receiptsPending the
 *   receipts not yet acknowledged.
 */
function startSmsc({ host = '127.0.0.1', port = 52775, receiptDelayMs = 100, receiptRetryMs = 1000, logger = noopLogger, onSubmit = () => {} } = {}) {
  const counters = { submitted: 0, failed: 0, receiptsSent: 0, receiptsResent: 0, inbound: 0 };
  const pendingReceipts = new Set();
  /** Receipts not acknowledged yet, by system_id then message id: { messageId, outcome, submit, submittedAt, attempts, session, retryTimer }. */
  const unacknowledged = new Map();
  // Ids must stay unique across simulator restarts too: the messaging app may still hold ids
  // from a previous run, so a per-instance random prefix goes in front of a hex counter.
  const idPrefix = crypto.randomBytes(4).toString('hex');
  let lastId = 0;
  const nextMessageId = () => idPrefix + (++lastId).toString(16).padStart(8, '0');
  let stalled = false;

  const server = smpp.createServer((session) => {
    session.binding = null; // { command, systemId, canSubmit, canReceive } once bound
    // The package stops reading the socket while paused: what the peer sends waits in the buffers.
    if (stalled) session.pause();
    // The smpp package emits 'error' on the session (ECONNRESET, oversized PDU, …) and an
    // unhandled 'error' would crash the process; after a parse error the session is also
    // stuck, so drop the connection either way.
    session.on('error', (err) => {
      logger.warn({ event: 'session_error', error: err.message }, 'smpp session error');
      session.destroy();
    });
    // Receipts written to this session and not answered go to another session of its system_id, or wait for the next bind.
    session.on('close', () => {
      if (session.binding && unacknowledged.has(session.binding.systemId)) resendWaiting(session.binding.systemId);
    });
    session.on('pdu', (pdu) => {
      // Handlers run inside the package's socket 'readable' loop, where a throw would kill
      // the process: report it and fail just this request.
      try {
        handlePdu(session, pdu);
      } catch (err) {
        logger.warn({ event: 'handler_error', command: pdu.command, error: err.message }, 'failed to handle PDU');
        if (!pdu.isResponse()) session.send(pdu.response({ command_status: smpp.ESME_RSYSERR }));
      }
    });
  });

  function handlePdu(session, pdu) {
    if (pdu.command in BIND_MODES) return handleBind(session, pdu);
    switch (pdu.command) {
      case 'enquire_link':
        return session.send(pdu.response());
      case 'unbind':
        logger.info({ event: 'unbind', systemId: session.binding && session.binding.systemId }, 'unbind');
        session.send(pdu.response());
        return session.close();
      case 'submit_sm':
        return handleSubmit(session, pdu);
      case 'generic_nack':
        return logger.warn({ event: 'generic_nack', status: pdu.command_status, seq: pdu.sequence_number }, 'ESME sent generic_nack');
      default:
        // Responses (deliver_sm_resp, …) need no answer; any other request is unsupported.
        if (pdu.isResponse()) return;
        logger.warn({ event: 'unsupported_pdu', command: pdu.command, commandId: pdu.command_id }, 'answering generic_nack');
        return session.send(new smpp.PDU('generic_nack', {
          command_status: smpp.ESME_RINVCMDID,
          sequence_number: pdu.sequence_number,
        }));
    }
  }

  function handleBind(session, pdu) {
    if (session.binding) return session.send(pdu.response({ command_status: smpp.ESME_RALYBND }));
    session.binding = { command: pdu.command, systemId: pdu.system_id, ...BIND_MODES[pdu.command] };
    logger.info({ event: pdu.command, systemId: pdu.system_id }, 'bound');
    session.send(pdu.response({ system_id: 'MELDSMSC' }));
    if (session.binding.canReceive) resendWaiting(pdu.system_id);
  }

  function handleSubmit(session, pdu) {
    if (!session.binding || !session.binding.canSubmit) {
      counters.failed++;
      logger.warn({ event: 'submit_sm', status: 'not_bound' }, 'submit_sm on a session not bound for sending');
      return session.send(pdu.response({ command_status: smpp.ESME_RINVBNDSTS }));
    }
    const submit = describeSubmit(pdu);
    const outcome = outcomeFor(submit.destination);
    if (REFUSALS[outcome] !== undefined) {
      counters.failed++;
      logger.info({ event: 'submit_sm', status: 'rejected', outcome, ...loggable(submit) }, 'submit_sm refused');
      onSubmit({ status: 'rejected', outcome, ...submit });
      return session.send(pdu.response({ command_status: REFUSALS[outcome] }));
    }
    const messageId = nextMessageId();
    counters.submitted++;
    logger.info({ event: 'submit_sm', status: 'accepted', messageId, outcome, ...loggable(submit) }, 'submit_sm accepted');
    onSubmit({ status: 'accepted', messageId, outcome, ...submit });
    // The response is written before the timer can fire, so on the same socket the ESME always
    // sees submit_sm_resp (and learns the id) before the receipt, even with receiptDelayMs 0.
    session.send(pdu.response({ message_id: messageId }));
    if ((pdu.registered_delivery & 0x01) === 0) return;
    const submittedAt = new Date();
    const systemId = session.binding.systemId;
    const timer = setTimeout(() => {
      pendingReceipts.delete(timer);
      const receipt = { messageId, outcome, submit, submittedAt, doneAt: new Date(), attempts: 0, session: null, retryTimer: null };
      if (!unacknowledged.has(systemId)) unacknowledged.set(systemId, new Map());
      unacknowledged.get(systemId).set(messageId, receipt);
      sendReceipt(systemId, receipt, session);
    }, receiptDelayMs);
    pendingReceipts.add(timer);
  }

  /** Writes a kept receipt to a session of its system_id that can receive (`preferred` first), or leaves it for the next bind. */
  function sendReceipt(systemId, receipt, preferred) {
    const target = stalled ? null : receiptSessionFor(systemId, preferred);
    const { messageId, outcome } = receipt;
    if (!target) {
      receipt.session = null;
      if (stalled) logger.info({ event: 'deliver_sm', messageId, stat: outcome, status: 'kept' }, 'stalled: receipt kept until resume()');
      else logger.warn({ event: 'deliver_sm', messageId, stat: outcome, status: 'kept' }, 'no session to receive the receipt: kept until one binds');
      return;
    }
    receipt.session = target;
    const resent = receipt.attempts++ > 0;
    // The smpp package calls back with the deliver_sm_resp of this PDU's sequence number.
    target.send(receiptPdu(receipt), (resp) => onReceiptAnswer(systemId, receipt, target, resp));
    counters.receiptsSent++;
    if (resent) counters.receiptsResent++;
    logger.info({ event: 'deliver_sm', messageId, stat: outcome, systemId, ...(resent ? { resent: true } : {}) }, resent ? 'receipt sent again' : 'receipt sent');
  }

  function onReceiptAnswer(systemId, receipt, session, resp) {
    const kept = unacknowledged.get(systemId);
    if (!kept || kept.get(receipt.messageId) !== receipt || receipt.session !== session) return;
    if (resp.command_status === 0 || resp.command_status === PERMANENT_APP_ERROR) {
      kept.delete(receipt.messageId);
      if (!kept.size) unacknowledged.delete(systemId);
      if (resp.command_status !== 0) logger.warn({ event: 'deliver_sm_resp', messageId: receipt.messageId, status: resp.command_status }, 'receipt refused for good: dropped');
      return;
    }
    receipt.session = null;
    const delay = Math.min(receiptRetryMs * 2 ** (receipt.attempts - 1), MAX_RECEIPT_RETRY_MS);
    logger.warn({ event: 'deliver_sm_resp', messageId: receipt.messageId, status: resp.command_status, retryInMs: delay }, 'receipt refused: sending it again later');
    receipt.retryTimer = setTimeout(() => {
      receipt.retryTimer = null;
      if (kept.get(receipt.messageId) === receipt && !receipt.session) sendReceipt(systemId, receipt);
    }, delay);
  }

  /** On a bind, and when a session closes: the receipts of a system_id written to no live session go (again) to one that can receive. */
  function resendWaiting(systemId) {
    for (const receipt of (unacknowledged.get(systemId) || new Map()).values()) {
      const live = receipt.session && receipt.session.socket.writable;
      if (!live && !receipt.retryTimer) sendReceipt(systemId, receipt);
    }
  }

  function receiptPdu({ messageId, outcome, submit, submittedAt, doneAt }) {
    const { messageState, err, delivered } = RECEIPT_OUTCOMES[outcome];
    const text = `id:${messageId} sub:001 dlvrd:${delivered ? '001' : '000'}` +
      ` submit date:${receiptDate(submittedAt)} done date:${receiptDate(doneAt)}` +
      ` stat:${outcome} err:${err} text:${receiptText(submit.text)}`;
    return new smpp.PDU('deliver_sm', {
      // A receipt travels back from the handset: addresses are swapped.
      source_addr_ton: submit.destTon,
      source_addr_npi: submit.destNpi,
      source_addr: submit.destination,
      dest_addr_ton: submit.sourceTon,
      dest_addr_npi: submit.sourceNpi,
      destination_addr: submit.source,
      esm_class: 0x04, // SMSC delivery receipt
      data_coding: 0x00,
      // Encoded here rather than by the package, whose data_coding 0 handling follows the
      // process-wide smpp.encodings.default that a client in the same process may change.
      short_message: smpp.gsmCoder.encode(text, 0x00),
      receipted_message_id: messageId,
      message_state: messageState,
    });
  }

  function receiptSessionFor(systemId, preferred) {
    const receives = (s) => s && s.binding && s.binding.canReceive && s.binding.systemId === systemId && s.socket.writable;
    return receives(preferred) ? preferred : server.sessions.find(receives);
  }

  /** A mobile-originated SMS to every receiving session; resolves with the deliver_sm_resp statuses. */
  function mo({ from, to, text }) {
    if (stalled) return Promise.resolve([]);
    const targets = server.sessions.filter((s) => s.binding && s.binding.canReceive && s.socket.writable);
    return Promise.all(targets.map((session) => new Promise((resolve) => {
      const pdu = {
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: String(from).replace(/^\+/, ''),
        dest_addr_ton: 5,
        dest_addr_npi: 0,
        destination_addr: String(to),
        esm_class: 0x00,
        data_coding: smpp.gsmCoder.GSM.charRegex.test(text) ? 0x00 : 0x08,
        short_message: smpp.gsmCoder.GSM.charRegex.test(text) ? smpp.gsmCoder.encode(text, 0x00) : Buffer.from(text, 'utf16le').swap16(),
      };
      const timer = setTimeout(() => resolve(-1), 5000);
      session.deliver_sm(pdu, (resp) => {
        clearTimeout(timer);
        resolve(resp.command_status);
      });
      counters.inbound++;
      logger.info({ event: 'deliver_sm', kind: 'mo', systemId: session.binding.systemId }, 'mobile-originated message sent');
    })));
  }

  /** The binds of the sessions connected now are lost, their connections stay open; answers how many were bound. */
  function forget() {
    const bound = server.sessions.filter((s) => s.binding);
    for (const session of bound) session.binding = null;
    logger.info({ event: 'forgotten', sessions: bound.length }, 'SMSC lost its binds: submits answered ESME_RINVBNDSTS until a new bind');
    return bound.length;
  }

  /** A receipt the `smpp` package cannot parse (an empty message_state TLV, or 'oversized': a frame too long) to every receiving session; answers how many. */
  function malformed(kind = 'empty-tlv') {
    const targets = server.sessions.filter((s) => s.binding && s.binding.canReceive && s.socket.writable);
    for (const session of targets) {
      if (kind === 'oversized') {
        session.socket.write(Buffer.from([0x10, 0, 0, 0, 0, 0, 0, 0x05, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]));
        continue;
      }
      const pdu = new smpp.PDU('deliver_sm', { sequence_number: 0x7fffffff, source_addr: '0', destination_addr: '0', esm_class: 0x04, short_message: smpp.gsmCoder.encode('id:0 stat:UNKNOWN', 0x00) });
      const buffer = Buffer.concat([pdu.toBuffer(), Buffer.from([0x04, 0x27, 0x00, 0x00])]);
      buffer.writeUInt32BE(buffer.length, 0);
      session.socket.write(buffer);
    }
    logger.info({ event: 'deliver_sm', kind: 'malformed', sessions: targets.length }, 'malformed receipt sent');
    return targets.length;
  }

  /** A hung SMSC: connections stay open, nothing is read or written until resume(). */
  function stall() {
    if (stalled) return;
    stalled = true;
    for (const session of server.sessions) session.pause();
    logger.info({ event: 'stalled', sessions: server.sessions.length }, 'SMSC stalled: connections open, nothing answered');
  }

  /** Reads and answers what waited during the stall, in order, then sends the receipts kept meanwhile. */
  function resume() {
    if (!stalled) return;
    stalled = false;
    logger.info({ event: 'resumed', sessions: server.sessions.length }, 'SMSC answering again');
    for (const session of [...server.sessions]) session.resume();
    for (const systemId of [...unacknowledged.keys()]) resendWaiting(systemId);
  }

  let closing = null;
  function close() {
    if (!closing) {
      closing = new Promise((resolve) => {
        for (const timer of pendingReceipts) clearTimeout(timer);
        pendingReceipts.clear();
        for (const kept of unacknowledged.values()) for (const receipt of kept.values()) clearTimeout(receipt.retryTimer);
        unacknowledged.clear();
        // server.close() only stops accepting; it calls back once every connection is gone.
        server.close(() => resolve());
        for (const session of [...server.sessions]) {
          session.close();
          // A peer that ignores our FIN must not hold close() forever.
          setTimeout(() => session.destroy(), 1000).unref();
        }
      });
    }
    return closing;
  }

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      server.on('error', (err) => logger.warn({ event: 'server_error', error: err.message }, 'smpp server error'));
      const boundPort = server.address().port;
      logger.info({ event: 'listening', host, port: boundPort, receiptDelayMs }, `SMSC simulator listening on smpp://${host}:${boundPort}`);
      resolve({
        port: boundPort,
        close,
        mo,
        stall,
        resume,
        forget,
        malformed,
        stalled: () => stalled,
        stats: () => ({ ...counters, receiptsPending: [...unacknowledged.values()].reduce((n, kept) => n + kept.size, 0), sessions: server.sessions.length }),
      });
    });
  });
}

/** The fields of a submit_sm that matter for routing, the receipt and the log. */
/**
 * What of a submit reaches a log line: no number or text (ADR 0338), only the last two digits
 * that pick the outcome, the text's length and the part.
 */
function loggable(submit) {
  const { sourceTon, sourceNpi, destTon, destNpi, dataCoding, part } = submit;
  return { sourceTon, sourceNpi, destTon, destNpi, dataCoding, part, destinationEnding: `…${String(submit.destination || '').slice(-2)}`, textLength: submit.text.length };
}

function describeSubmit(pdu) {
  // smpp decodes short_message / message_payload into { udh?: Buffer[], message: string | Buffer }
  // using data_coding (UCS-2 included); message_payload is used when short_message is empty.
  const shortMessage = pdu.short_message && pdu.short_message.message;
  const body = shortMessage && shortMessage.length ? pdu.short_message : pdu.message_payload || pdu.short_message || {};
  return {
    source: pdu.source_addr,
    sourceTon: pdu.source_addr_ton,
    sourceNpi: pdu.source_addr_npi,
    destination: pdu.destination_addr,
    destTon: pdu.dest_addr_ton,
    destNpi: pdu.dest_addr_npi,
    dataCoding: pdu.data_coding,
    text: typeof body.message === 'string' ? body.message : '', // binary payloads have no text
    part: concatenationInfo(pdu, body.udh),
  };
}

/** { ref, total, seq } for one part of a concatenated SMS, from the UDH or the sar_* TLVs. */
function concatenationInfo(pdu, udhList) {
  for (const ie of udhList || []) {
    // Information elements: 0x00 = concatenation with 8-bit reference, 0x08 = 16-bit reference.
    if (ie[0] === 0x00 && ie.length >= 5) return { ref: ie[2], total: ie[3], seq: ie[4] };
    if (ie[0] === 0x08 && ie.length >= 6) return { ref: ie.readUInt16BE(2), total: ie[4], seq: ie[5] };
  }
  if (pdu.sar_total_segments !== undefined) {
    return { ref: pdu.sar_msg_ref_num, total: pdu.sar_total_segments, seq: pdu.sar_segment_seqnum };
  }
  return undefined;
}

/** YYMMDDhhmm in UTC, the date format of SMPP 3.4 Appendix B receipts. */
function receiptDate(date) {
  return date.toISOString().replace(/\D/g, '').slice(2, 12);
}

/**
 * The first 20 characters of the message, limited to what the GSM default alphabet can carry;
 * control characters become spaces so the receipt stays one line for regex parsers.
 */
function receiptText(text) {
  return Array.from(text).slice(0, 20)
    .map((ch) => (ch < ' ' ? ' ' : smpp.gsmCoder.GSM.charRegex.test(ch) ? ch : '?'))
    .join('');
}

module.exports = { startSmsc, outcomeFor };
