/**
 * Two-factor sign-in with TOTP (RFC 6238: SHA-1, six digits, 30 s, as every
 * authenticator app reads it) through otplib, and single-use recovery codes.
 * A code is accepted one step either side of now, and each step once only
 * (the caller keeps the steps used); a recovery code is kept as its SHA-256.
 */
import crypto from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';

export const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export const newSeed = (): string => generateSecret();

/** The otpauth:// address an authenticator app reads from the QR code, and the QR code as SVG. */
export async function enrolment(email: string, seed: string): Promise<{ otpauth_url: string; qr_svg: string }> {
  const url = generateURI({ issuer: 'Lookout', label: email, secret: seed });
  return { otpauth_url: url, qr_svg: await QRCode.toString(url, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }) };
}

/** The time step a six-digit code belongs to, or null when it is not the code of a step within ±30 s. */
export async function codeStep(seed: string, code: string, now = Date.now()): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const epoch = Math.floor(now / 1000);
  const result = await verify({ secret: seed, token: code, epoch, epochTolerance: 30 });
  return result.valid ? Math.floor(epoch / 30) + result.delta : null;
}

/** Whether the text has a recovery code's form (`xxxxx-xxxxx`) rather than a TOTP code's. */
export const looksLikeRecoveryCode = (text: string): boolean => /^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(text.trim());

export const recoveryHash = (code: string): string =>
  crypto.createHash('sha256').update(code.trim().toLowerCase().replace('-', '')).digest('hex');

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const chars = Array.from({ length: 10 }, () => RECOVERY_ALPHABET[crypto.randomInt(RECOVERY_ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}
