import { receiptOf } from './smsc-client';

const smpp = require('smpp');

/** A deliver_sm as the SMSC writes it, read back by the `smpp` package as the session reads it. */
function deliverSm(fields: Record<string, unknown>) {
  const text = typeof fields.short_message === 'string' ? smpp.gsmCoder.encode(fields.short_message, 0x00) : Buffer.alloc(0);
  const pdu = new smpp.PDU('deliver_sm', { source_addr: '447400123700', destination_addr: 'ACME', esm_class: 0x04, data_coding: 0x00, ...fields, short_message: text });
  return smpp.PDU.fromBuffer(pdu.toBuffer());
}

const TEXT = 'sub:001 dlvrd:001 submit date:2611292210 done date:2611292211';

describe('receiptOf (SMPP 3.4 appendix B, §5.3.2.35)', () => {
  it('reads the appendix B receipt text', () => {
    expect(receiptOf(deliverSm({ short_message: `id:ab12 ${TEXT} stat:DELIVRD err:000 text:hello` }))).toEqual({ messageId: 'ab12', stat: 'DELIVRD' });
    expect(receiptOf(deliverSm({ short_message: `id:ab12 ${TEXT} stat:UNDELIV err:001 text:` }))).toEqual({ messageId: 'ab12', stat: 'UNDELIV', error: 'err:001' });
  });

  it.each([
    ['a lower-case stat and field names', { short_message: `id:ab12 ${TEXT} stat:delivrd err:000` }, { messageId: 'ab12', stat: 'DELIVRD' }],
    ['fields separated by commas', { short_message: 'id:ab12,sub:001,dlvrd:001,stat:DELIVRD,err:004' }, { messageId: 'ab12', stat: 'DELIVRD', error: 'err:004' }],
    ['capitalised field names', { short_message: `Id:ab12 Sub:001 Dlvrd:000 Stat:Undeliv Err:002` }, { messageId: 'ab12', stat: 'UNDELIV', error: 'err:002' }],
    ['no id: in the text, the id in receipted_message_id', { short_message: `${TEXT} stat:EXPIRED err:000`, receipted_message_id: 'ab12' }, { messageId: 'ab12', stat: 'EXPIRED' }],
    ['no text, the TLVs only (message_state 2 DELIVERED)', { receipted_message_id: 'ab12', message_state: 2 }, { messageId: 'ab12', stat: 'DELIVRD' }],
    ['no stat: in the text, message_state 5 UNDELIVERABLE', { short_message: `id:ab12 ${TEXT}`, message_state: 5 }, { messageId: 'ab12', stat: 'UNDELIV' }],
    ['message_state 3 EXPIRED beside a text without stat:', { short_message: 'id:ab12', message_state: 3 }, { messageId: 'ab12', stat: 'EXPIRED' }],
  ])('reads a receipt with %s', (_, fields, expected) => {
    expect(receiptOf(deliverSm(fields))).toEqual(expected);
  });

  it("nothing is read from the message's own text (text:)", () => {
    expect(receiptOf(deliverSm({ short_message: `id:ab12 ${TEXT} stat:DELIVRD err:000 text:my id:zz99` }))).toEqual({ messageId: 'ab12', stat: 'DELIVRD' });
    expect(receiptOf(deliverSm({ short_message: `${TEXT} text:id:zz99 stat:DELIVRD`, receipted_message_id: 'ab12', message_state: 5 }))).toEqual({ messageId: 'ab12', stat: 'UNDELIV' });
  });

  it.each([
    ['no id anywhere', { short_message: `${TEXT} stat:DELIVRD err:000` }],
    ['no stat anywhere', { short_message: `id:ab12 ${TEXT} err:000` }],
    ['an unknown message_state and no stat:', { receipted_message_id: 'ab12', message_state: 42 }],
  ])('is null for a receipt with %s (acknowledged and dropped)', (_, fields) => {
    expect(receiptOf(deliverSm(fields))).toBeNull();
  });

  it('is null for a mobile-originated deliver_sm', () => {
    expect(receiptOf(deliverSm({ esm_class: 0x00, short_message: 'id:ab12 stat:DELIVRD' }))).toBeNull();
  });
});
