/**
 * Sending one notification: a webhook POST (signed, to a checked address,
 * 5 s at most, no redirects followed, the answer read up to a cap) or an
 * email through SMTP. Each call is one attempt; retries are BullMQ's.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import { emailOf, signatureHeader, slackBody, type NoticeBody } from '../domain/notifications.ts';
import type { ChannelDoc } from '../store/channels.store.ts';
import type { Attempt } from './notify.state.ts';
import { checkedRequest, TargetRefused } from './outbound.ts';

const SEND_TIMEOUT_MS = 5000;
/** The most of an answer read; its first 1 KB is kept in the deliveries log. */
const ANSWER_READ_BYTES = 64 * 1024;
const ANSWER_KEPT_BYTES = 1024;

export interface SendOptions {
  publicUrl: string;
  allowPrivate: boolean;
  smtpUrl: string | null;
  mailFrom: string;
}

/** One attempt's outcome: `ok` on a 2xx (or an accepted email); `refused` when retrying cannot help. */
export type Outcome = Attempt & { ok: boolean; refused: boolean };

export async function sendNotice(channel: ChannelDoc, body: NoticeBody, opts: SendOptions, now = new Date()): Promise<Outcome> {
  try {
    return channel.kind === 'email' ? await sendEmail(channel, body, opts, now) : await postWebhook(channel, body, opts, now);
  } catch (err) {
    const refused = err instanceof TargetRefused;
    return { at: now.toISOString(), status: null, error: refused ? `refused (${err.rule}): ${err.message}` : describe(err), answer: '', ok: false, refused };
  }
}

/** The raw body a channel is sent: Lookout's JSON, or Slack's shape. */
function rawBody(channel: Pick<ChannelDoc, 'format'>, body: NoticeBody, publicUrl: string): string {
  return JSON.stringify(channel.format === 'slack' ? slackBody(body, publicUrl) : body);
}

async function postWebhook(channel: ChannelDoc, body: NoticeBody, opts: SendOptions, now: Date): Promise<Outcome> {
  const raw = rawBody(channel, body, opts.publicUrl);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Lookout-Webhook/1',
    'x-lookout-event': body.event,
    'x-lookout-delivery': body.delivery,
    'x-lookout-signature': signatureHeader(channel.secret!, raw, now),
  };
  const answer = await checkedRequest(channel.url!, {
    method: 'POST',
    headers,
    body: raw,
    signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    allowPrivate: opts.allowPrivate,
    readBytes: ANSWER_READ_BYTES,
  });
  const { status } = answer;
  const ok = status >= 200 && status < 300;
  const redirect = status >= 300 && status < 400 ? ` (redirects are not followed: ${answer.headers.location ?? 'no location'})` : '';
  return { at: now.toISOString(), status, error: ok ? null : `HTTP ${status}${redirect}`, answer: answer.body.subarray(0, ANSWER_KEPT_BYTES).toString('utf8'), ok, refused: false };
}

const transports = new Map<string, Transporter>();

/** SMTP_URL → the transport's options: smtps:// is TLS from the start, smtp:// upgrades with STARTTLS when offered. */
function smtpOptions(text: string) {
  const url = new URL(text);
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: SEND_TIMEOUT_MS,
    greetingTimeout: SEND_TIMEOUT_MS,
    socketTimeout: SEND_TIMEOUT_MS,
  };
}

async function sendEmail(channel: ChannelDoc, body: NoticeBody, opts: SendOptions, now: Date): Promise<Outcome> {
  if (!opts.smtpUrl) throw new TargetRefused('smtp', 'no SMTP_URL is configured, so email cannot be sent');
  let transport = transports.get(opts.smtpUrl);
  if (!transport) {
    transport = nodemailer.createTransport(smtpOptions(opts.smtpUrl));
    transports.set(opts.smtpUrl, transport);
  }
  const mail = emailOf(body, opts.publicUrl);
  const info = await transport.sendMail({
    from: opts.mailFrom,
    to: channel.email!,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    headers: { 'X-Lookout-Event': body.event, 'X-Lookout-Delivery': body.delivery },
  });
  return { at: now.toISOString(), status: null, error: null, answer: String(info.response ?? '').slice(0, ANSWER_KEPT_BYTES), ok: true, refused: false };
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${SEND_TIMEOUT_MS / 1000} s`;
  return e.code ? `${e.code}: ${e.message}` : e.message;
}
