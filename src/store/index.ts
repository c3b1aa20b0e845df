/** All collections behind one object, built once per process. */
import { makeActivityStore } from './activity.store.ts';
import { makeAttachmentsStore } from './attachments.store.ts';
import { makeBindingsStore } from './bindings.store.ts';
import { makeChannelsStore } from './channels.store.ts';
import { makeContactsStore } from './contacts.store.ts';
import { makeEventsStore } from './events.store.ts';
import { makeExpiredStore } from './expired.store.ts';
import { makeFeedbackStore } from './feedback.store.ts';
import { makeIssuesStore } from './issues.store.ts';
import { makeOrgsStore } from './orgs.store.ts';
import type { Mongo } from './mongo.ts';
import { makeProjectsStore } from './projects.store.ts';
import { makeSessionsStore } from './sessions.store.ts';
import { makeCheckInsStore } from './checkins.store.ts';
import { makeProbesStore } from './probes.store.ts';
import { makeMaintenanceStore } from './maintenance.store.ts';
import { makeSettingsStore } from './settings.store.ts';
import { makeSlugsStore } from './slugs.store.ts';
import { makeSourcemapsStore } from './sourcemaps.store.ts';
import { makeDeploysStore } from './deploys.store.ts';
import { makeTokensStore } from './tokens.store.ts';
import { makeTracesStore } from './traces.store.ts';
import { makeBouncersStore } from './bouncers.store.ts';
import { makeUsersStore } from './users.store.ts';

export function makeStores({ db, profile }: Pick<Mongo, 'db' | 'profile'>) {
  const slugs = makeSlugsStore(db);
  const stores = {
    slugs,
    orgs: makeOrgsStore(db, slugs),
    projects: makeProjectsStore(db, slugs),
    bindings: makeBindingsStore(db),
    channels: makeChannelsStore(db),
    contacts: makeContactsStore(db),
    events: makeEventsStore(db, profile),
    expired: makeExpiredStore(db),
    attachments: makeAttachmentsStore(db),
    feedback: makeFeedbackStore(db),
    activity: makeActivityStore(db),
    issues: makeIssuesStore(db),
    sessions: makeSessionsStore(db, profile),
    checkins: makeCheckInsStore(db),
    probes: makeProbesStore(db),
    maintenance: makeMaintenanceStore(db),
    settings: makeSettingsStore(db),
    users: makeUsersStore(db),
    tokens: makeTokensStore(db),
    bouncers: makeBouncersStore(db),
    sourcemaps: makeSourcemapsStore(db),
    deploys: makeDeploysStore(db),
    traces: makeTracesStore(db),
  };
  return {
    ...stores,
    async ensureIndexes() {
      await stores.projects.ensureIndexes();
      await stores.contacts.ensureIndexes();
      await stores.channels.ensureIndexes();
      await stores.events.ensureIndexes();
      await stores.issues.ensureIndexes();
      await stores.feedback.ensureIndexes();
      await stores.attachments.ensureIndexes();
      await stores.sessions.ensureIndexes();
      await stores.checkins.ensureIndexes();
      await stores.sourcemaps.ensureIndexes();
      await stores.traces.ensureIndexes();
    },
  };
}
export type Stores = ReturnType<typeof makeStores>;
