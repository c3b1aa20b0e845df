/**
 * Key material. Secret keys are 256 random bits; only their SHA-256 is
 * stored (a slow password hash adds nothing for keys of that entropy) and the
 * comparison after the lookup is constant-time. Public keys are 32 hex
 * characters, the shape of a Sentry DSN's public key, so other makers' SDKs
 * accept them.
 */
import crypto from 'node:crypto';

export function newSecretKey(): string {
  return `lk_sk_${crypto.randomBytes(32).toString('base64url')}`;
}

export function newPublicKey(): string {
  return crypto.randomBytes(16).toString('hex');
}

export function hashSecret(key: string): string {
  return crypto.hash('sha256', key);
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}
