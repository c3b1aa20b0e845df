/** What a request carries through the middleware: its id and logger, and what auth and body parsing found. */
import type { Envelope } from '../domain/envelope.ts';
import type { Logger } from '../log.ts';
import type { ProjectDoc } from '../store/projects.store.ts';

export interface AppState {
  requestId: string;
  log: Logger;
  project: ProjectDoc;
  /** the bound installation a request came from (its key and X-Service-Instance), heard once it is answered */
  installation?: string;
  /** the Sentry endpoints: the parsed envelope, or the parsed JSON body (a store event, a CSP report) */
  envelope?: Envelope;
  sentryBody?: { value: unknown; bytes: number };
  /** an ingest request's turn of the thread, awaited once its body is read (src/util/turns.ts) */
  turn?: () => Promise<void>;
}
