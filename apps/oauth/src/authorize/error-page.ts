import { escapeHtml, page } from '../consent/html';

/** The page shown instead of redirecting to a URI we cannot trust. */
export const errorPage = (description: string) => page('Authorization failed', `<h1>Authorization failed</h1><p>${escapeHtml(description)}</p><p>Contact the developer of the application you came from.</p>`);
