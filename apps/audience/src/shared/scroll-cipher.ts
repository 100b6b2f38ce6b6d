import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { PRINCIPAL_VERIFIER, type PrincipalVerifier } from '@meld/auth';
import { Inject, Injectable } from '@nestjs/common';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals the part of a scroll position that is contact-derived text (an event's `_event_id`, which
 * may hold an email or a phone number, ADR 0354) so a scroll id carries it unreadable whatever
 * the caller may see: AES-256-GCM under a key derived from this app's principal key (HKDF, a label
 * of its own), the scroll's filter digest as associated data, so a sealed position is good for the
 * scroll it was issued in only. Nothing is stored: every replica with the same key opens it.
 */
@Injectable()
export class ScrollCipher {
  private readonly key: Buffer;

  constructor(@Inject(PRINCIPAL_VERIFIER) verifier: PrincipalVerifier) {
    this.key = Buffer.from(hkdfSync('sha256', verifier.key, Buffer.alloc(0), 'meld audience scroll positions v1', 32));
  }

  seal(text: string, digest: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(digest));
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The sealed text, or null when it was not sealed by us for this digest (altered, forged, another filter). */
  open(sealed: unknown, digest: string): string | null {
    if (typeof sealed !== 'string' || sealed.length > 2048) return null;
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(digest));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
