import { words } from './names';

describe('words of a catalogue name', () => {
  it.each([
    ['lastOrderAt', ['last', 'order', 'at']],
    ['last-order_at', ['last', 'order', 'at']],
    ['APIToken', ['api', 'token']],
    ['SKUId', ['sku', 'id']],
    ['SKUIds', ['sku', 'ids']],
    ['userUUID', ['user', 'uuid']],
    ['userIDs', ['user', 'ids']],
    ['IDsHash', ['ids', 'hash']],
    ['HTTPSUrl', ['https', 'url']],
    ['OAuth2Token', ['o', 'auth2', 'token']],
    ['ID', ['id']],
    ['__proto__', ['proto']],
  ])('%s → %j', (uid, expected) => expect(words(uid)).toEqual(expected));
});
