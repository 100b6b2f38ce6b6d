import { LOGGABLE_PARAMS, PUBLIC_ROUTES, routeParams } from '@meld/contracts';
import { urlRedactor } from './redact-url';

const redact = urlRedactor();
const EMAIL = 'jane.doe@example.com';
const PHONE = '+33612345678';

describe('access-log URL redaction', () => {
  it('hides the search values and keeps the project', () => {
    expect(redact(`/v1/project/demo/audience/search/email/${encodeURIComponent(EMAIL)}`)).toBe('/v1/project/demo/audience/search/email/:userEmail');
    expect(redact(`/v1/project/demo/audience/search/phone/${PHONE}`)).toBe('/v1/project/demo/audience/search/phone/:phone');
    expect(redact('/v1/project/demo/datasource/ds-1/stream/contacts/u-42')).toBe('/v1/project/demo/datasource/ds-1/stream/contacts/:userId');
  });

  it('hides every query value and odd query keys', () => {
    expect(redact(`/v1/project/demo/datasource?_q=${EMAIL}&page=2`)).toBe('/v1/project/demo/datasource?_q=[redacted]&page=[redacted]');
    expect(redact(`/v1/project/demo?${EMAIL}`)).toBe('/v1/project/demo?[redacted]');
  });

  it('hides what an unknown /v1 path carries', () => {
    expect(redact(`/v1/project/demo/audience/serch/email/${EMAIL}`)).toBe('/v1/project/[redacted]/audience/[redacted]/email/[redacted]');
  });

  it('leaves operational paths alone', () => {
    expect(redact('/healthz')).toBe('/healthz');
    expect(redact('/admin/v1/organizations/o1')).toBe('/admin/v1/organizations/o1');
  });

  it('redacts every parameter of every route but the issued identifiers', () => {
    for (const route of PUBLIC_ROUTES) {
      const params = routeParams(route.path);
      const url = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => `${name}-${EMAIL}`);
      const shown = redact(url);
      for (const p of params) {
        expect(shown).toContain(`:${p}`);
      }
      expect(shown).not.toContain('jane');
      // Issued identifiers are shown: uids and uuids.
      const issued = redact(route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => `${name}-1b9e4c2a-7d3f-4e5a-9c1b-2f6d8e0a4b7c`));
      for (const p of params) if (LOGGABLE_PARAMS.has(p)) expect(issued).toContain(`${p}-1b9e4c2a`);
    }
  });

  it('masks link codes and what looks like an email or a phone outside the route table (ADR 0338)', () => {
    expect(redact('/u/Ab3dEf9hJk')).toBe('/u/:code');
    expect(redact('/l/Zx81?utm=1')).toBe('/l/:code?utm=[redacted]');
    expect(redact('/u/page.css')).toBe('/u/page.css');
    expect(redact(`/V1/project/demo/audience/search/email/${EMAIL}`)).not.toContain('jane');
    expect(redact(`//v1/project/demo/audience/search/phone/${PHONE}`)).not.toContain('612345678');
    expect(redact(`/nowhere/${encodeURIComponent(PHONE)}/${EMAIL}`)).toBe('/nowhere/[redacted]/[redacted]');
    expect(redact(`/v1/project/demo/audience/${EMAIL}/events`)).toBe('/v1/project/demo/audience/:audienceId/events');
    expect(redact('/v1/project/demo/audience/33612345678/events')).toBe('/v1/project/demo/audience/:audienceId/events');
  });

  it('masks a phone written with separators outside the route table: the SMS suppressions admin API reads a number as a person writes it (ADRs 0338, 0361)', () => {
    for (const phone of ['+44-7400-123-498', '0740-012-3498', '07400.123.498', '+44(0)7400-123-498']) {
      expect(redact(`/admin/v1/projects/demo/suppressions/sms/${phone}`)).toBe('/admin/v1/projects/demo/suppressions/sms/[redacted]');
    }
    expect(redact('/admin/v1/projects/demo-1b9e4c2a/suppressions/sms')).toBe('/admin/v1/projects/demo-1b9e4c2a/suppressions/sms');
  });
});
