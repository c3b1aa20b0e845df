/**
 * The `notify.deliver` job's payload: one notification (a trigger's or a test) or a channel's digest, under its
 * delivery id, which is also the job's id, so a delivery dispatched twice is sent once (src/notify/dispatcher.ts).
 * The worker delivers it (src/notify/deliver.ts).
 */
import type { NoticeBody, Trigger } from '../../domain/notifications.ts';

export interface NotifyDeliverPayload {
  project: number;
  channel: number;
  delivery: string;
  event: Trigger | 'test' | 'digest';
  /** the body, made when the delivery was dispatched; a digest's is made when it is due */
  body?: NoticeBody;
  project_name?: string;
}
