import { SCOPE_DESCRIPTIONS, type Scope } from '@meld/contracts';
import type { AuthorizationRequest, RedirectFailure } from '../authorize/authorization-request';
import { displayName } from '../registration/client-name';
import { escapeHtml, page } from './html';
import type { ConsentUser } from './consent.repository';

/** What the sign-in page shows of a request: a good one, or one whose error waits for the sign-in (ADR 0357). */
type Requester = Pick<AuthorizationRequest, 'client' | 'redirectUri'>;

const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
const host = (redirectUri: string) => escapeHtml(new URL(redirectUri).host);
/** The client's name isolated from the sentence around it, its bidi and control characters shown as U+FFFD (ADR 0143). */
const clientName = (name: string) => `<bdi>${escapeHtml(displayName(name))}</bdi>`;
const header = (req: Requester) =>
  `<h1><strong>${clientName(req.client.name)}</strong> wants to use your Meld account</h1><p class="host">It will send you back to <strong>${host(req.redirectUri)}</strong>.</p>`;

export function loginPage(req: Requester, query: string, csrf: string, error: string | null): string {
  return page(
    'Sign in',
    `${header(req)}<form method="post" action="/oauth/consent/login">${hidden('csrf', csrf)}${hidden('request', query)}
<h2>Sign in</h2>${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<label>E-mail <input type="email" name="email" autocomplete="username" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`,
  );
}

export function consentPage(req: AuthorizationRequest, query: string, csrf: string, user: ConsentUser, granted: Scope[], withheld: Scope[]): string {
  const projects = user.projects
    .map((p) => `<li><label><input type="checkbox" name="projects" value="${escapeHtml(p.uid)}" checked> ${escapeHtml(p.name)} <code>${escapeHtml(p.uid)}</code></label></li>`)
    .join('');
  const scopes = granted.map((s) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[s])} <code>${s}</code></li>`).join('');
  const refused = withheld.length ? `<p class="note">Not available to applications in this organization: ${withheld.map((s) => `<code>${s}</code>`).join(', ')}.</p>` : '';
  return page(
    'Authorize',
    `${header(req)}<form method="post" action="/oauth/consent/decision">${hidden('csrf', csrf)}${hidden('request', query)}
<h2>Organization ${escapeHtml(user.organizationName)}</h2><p>Projects it may reach:</p><ul class="projects">${projects}</ul>
<p>It will be able to:</p><ul class="scopes">${scopes}</ul>${refused}
<div class="actions"><button type="submit" name="decision" value="deny" class="secondary">Deny</button><button type="submit" name="decision" value="approve">Approve</button></div></form>`,
  );
}

/**
 * A signed-in user's answer to an erroneous request of a known client: the error in words and a
 * plain link to the client's error response, followed only if the user chooses to (OAuth 2.1
 * §7.12.2: the client may be anyone's, so Meld does not send the browser there by itself).
 */
export function failedRequestPage(failure: RedirectFailure): string {
  return page(
    'Request cannot be completed',
    `<h1>The request of <strong>${clientName(failure.client.name)}</strong> cannot be completed</h1>
<p class="error" role="alert">${escapeHtml(failure.description)}.</p>
<p>Nothing was granted. Return to the application only if you trust it.</p>
<p class="actions"><a class="button" href="${escapeHtml(failure.location)}">Return to ${host(failure.redirectUri)}</a></p>`,
  );
}

export const STYLESHEET = `body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:32rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:1.5rem}label{display:block;margin:.75rem 0}
input[type=email],input[type=password]{display:block;width:100%;padding:.5rem;box-sizing:border-box}
ul{padding-left:1.2rem}code{font-size:.8rem;color:#5a6270}.error{color:#b00020}.note{color:#5a6270;font-size:.9rem}
.actions{display:flex;gap:1rem;justify-content:flex-end;margin-top:1.5rem}
button{padding:.6rem 1.4rem;border:0;border-radius:4px;background:#2251d1;color:#fff;font-size:1rem;cursor:pointer}
button.secondary{background:#e3e6eb;color:#1d2330}
a.button{padding:.6rem 1.4rem;border-radius:4px;background:#2251d1;color:#fff;text-decoration:none}`;
