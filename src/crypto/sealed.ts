/**
 * Secrets Lookout must read back (a TOTP seed, an OpenID client secret) are
 * kept sealed: AES-256-GCM under ENCRYPTION_KEY, each with its own random
 * nonce, written `v1.<nonce>.<tag>.<ciphertext>` in base64url. A sealed
 * value opened under another key, or altered, is refused.
 */
import crypto from 'node:crypto';

export interface SealedBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/** The box of a 32-byte key (64 hex digits). */
export function makeSealedBox(hexKey: string): SealedBox {
  const key = Buffer.from(hexKey, 'hex');
  if (key.length !== 32) throw new Error('the sealing key needs 32 bytes (64 hex digits)');
  return {
    seal(plain) {
      const nonce = crypto.randomBytes(12);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', nonce, cipher.getAuthTag(), body].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    open(sealed) {
      const [version, nonce, tag, body] = sealed.split('.');
      if (version !== 'v1' || nonce === undefined || tag === undefined || body === undefined) throw new Error('not a sealed value');
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
