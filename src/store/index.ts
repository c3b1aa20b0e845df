/** All collections behind one object, built once per process. */
import type { Db } from 'mongodb';
import { makeBindingsStore } from './bindings.store.ts';
import { makeContactsStore } from './contacts.store.ts';
import { makeOrgsStore } from './orgs.store.ts';
import { makeProjectsStore } from './projects.store.ts';

export function makeStores(db: Db) {
  const stores = {
    orgs: makeOrgsStore(db),
    projects: makeProjectsStore(db),
    bindings: makeBindingsStore(db),
    contacts: makeContactsStore(db),
  };
  return {
    ...stores,
    async ensureIndexes() {
      await stores.projects.ensureIndexes();
      await stores.contacts.ensureIndexes();
    },
  };
}
export type Stores = ReturnType<typeof makeStores>;
