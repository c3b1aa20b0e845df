/** All collections behind one object, built once per process. */
import type { Db } from 'mongodb';
import { makeBindingsStore } from './bindings.store.ts';
import { makeContactsStore } from './contacts.store.ts';
import { makeEventsStore } from './events.store.ts';
import { makeIssuesStore } from './issues.store.ts';
import { makeOrgsStore } from './orgs.store.ts';
import { makeProjectsStore } from './projects.store.ts';

export function makeStores(db: Db) {
  const stores = {
    orgs: makeOrgsStore(db),
    projects: makeProjectsStore(db),
    bindings: makeBindingsStore(db),
    contacts: makeContactsStore(db),
    events: makeEventsStore(db),
    issues: makeIssuesStore(db),
  };
  return {
    ...stores,
    async ensureIndexes() {
      await stores.projects.ensureIndexes();
      await stores.contacts.ensureIndexes();
      await stores.events.ensureIndexes();
      await stores.issues.ensureIndexes();
    },
  };
}
export type Stores = ReturnType<typeof makeStores>;
