/**
 * What every AccountStore must do, whatever it keeps its data in. A test file calls storeContract
 * with a way to open a fresh, empty store; each test opens its own, migrates it and closes it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ExecutionContext, TestFn } from 'ava';
import { StoreConflictError, type Account, type AccountStore, type NewAccount } from '../../src/state/store.js';

const NOW = Date.UTC(2030, 0, 15, 12);
const DAY = '2030-01-15';

const digestOf = (text: string) => createHash('sha256').update(text).digest();

export function storeContract(test: TestFn, label: string, open: () => Promise<AccountStore>) {
  async function openStore(t: ExecutionContext) {
    const store = await open();
    t.teardown(() => store.close());
    await store.migrate();
    return store;
  }

  async function withAccounts(t: ExecutionContext, ...accounts: NewAccount[]) {
    const store = await openStore(t);
    const created: Account[] = [];
    for (const account of accounts) created.push(await store.createAccount(account, NOW));
    return { store, accounts: created };
  }

  async function withKeys(t: ExecutionContext) {
    const { store, accounts } = await withAccounts(t, { name: 'alice' }, { name: 'bob' });
    const alice = accounts[0]!;
    const bob = accounts[1]!;
    const insert = (id: string, accountId: string, createdAt: number) =>
      store.insertKey({ id, accountId, name: `key ${id}`, digest: digestOf(id) }, createdAt);
    const keys = {
      aliceOld: await insert('k1', alice.id, NOW),
      aliceNew: await insert('k2', alice.id, NOW + 1000),
      bob: await insert('k3', bob.id, NOW + 500),
    };
    return { store, alice, bob, keys };
  }

  const title = (what: string) => `${label}: ${what}`;

  test(title('an account is created with defaults and found by id, name or email'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice', email: 'Alice@Example.COM', dailyAllowance: 100 });
    const alice = accounts[0]!;
    t.like(alice, {
      name: 'alice',
      email: 'alice@example.com',
      status: 'active',
      dailyAllowance: 100,
      ratePerSecond: null,
      ratePerMinute: null,
      createdAt: NOW,
    });
    t.is(typeof alice.id, 'string');
    for (const reference of [alice.id, 'alice', 'alice@example.com', 'ALICE@example.com']) {
      t.deepEqual(await store.findAccount(reference), alice, reference);
    }
    t.is(await store.findAccount('nobody'), undefined);
  });

  test(title('accounts are listed, and a sign-in finds the password hash by name or email'), async (t) => {
    const { store, accounts } = await withAccounts(
      t,
      { name: 'alice', email: 'alice@example.com', passwordHash: '$argon2id$alice' },
      { name: 'bob' },
    );
    const listed = await store.listAccounts();
    t.deepEqual(
      [...listed].sort((a, b) => a.name.localeCompare(b.name)),
      accounts,
    );
    t.deepEqual(await store.findLogin('alice'), { account: accounts[0]!, passwordHash: '$argon2id$alice' });
    t.deepEqual(await store.findLogin('ALICE@EXAMPLE.COM'), { account: accounts[0]!, passwordHash: '$argon2id$alice' });
    t.deepEqual(await store.findLogin('bob'), { account: accounts[1]!, passwordHash: null });
    t.is(await store.findLogin('carol'), undefined);
  });

  test(title('an update changes only the patched fields; null clears one'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice', dailyAllowance: 100, ratePerSecond: 5 });
    const alice = accounts[0]!;
    const updated = await store.updateAccount(alice.id, { status: 'disabled', dailyAllowance: null, email: 'New@Example.com', ratePerMinute: 0 });
    t.deepEqual(updated, { ...alice, status: 'disabled', dailyAllowance: null, email: 'new@example.com', ratePerMinute: 0 });
    t.deepEqual(await store.findAccount(alice.id), updated);
    t.deepEqual(await store.updateAccount(alice.id, {}), updated, 'an empty patch changes nothing');
    await store.updateAccount(alice.id, { passwordHash: '$argon2id$new' });
    t.is((await store.findLogin('alice'))?.passwordHash, '$argon2id$new');
    t.is(await store.updateAccount('no-such-id', { status: 'disabled' }), undefined);
  });

  test(title('a taken name or email is a StoreConflictError saying which'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice', email: 'alice@example.com' }, { name: 'bob' });
    const nameTaken = await t.throwsAsync(store.createAccount({ name: 'alice' }, NOW), { instanceOf: StoreConflictError });
    t.regex(nameTaken!.message, /name/);
    const emailTaken = await t.throwsAsync(store.createAccount({ name: 'carol', email: 'ALICE@example.com' }, NOW), {
      instanceOf: StoreConflictError,
    });
    t.regex(emailTaken!.message, /email/);
    await t.throwsAsync(store.updateAccount(accounts[1]!.id, { email: 'alice@example.com' }), { instanceOf: StoreConflictError, message: /email/ });
    t.is((await store.listAccounts()).length, 2, 'nothing was created');
    await t.notThrowsAsync(store.createAccount({ name: 'carol', email: null }, NOW), 'several accounts may have no email');
  });

  test(title('keys are listed newest first, deleted ones only when asked'), async (t) => {
    const { store, alice, keys } = await withKeys(t);
    t.deepEqual(keys.aliceOld, { id: 'k1', accountId: alice.id, name: 'key k1', createdAt: NOW, lastUsedAt: null, deletedAt: null });
    t.deepEqual(await store.listKeys(), [keys.aliceNew, keys.bob, keys.aliceOld]);
    t.deepEqual(await store.listKeys({ accountId: alice.id }), [keys.aliceNew, keys.aliceOld]);
    t.true(await store.deleteKey('k2', NOW + 2000));
    t.deepEqual(await store.listKeys({ accountId: alice.id }), [keys.aliceOld]);
    t.deepEqual(await store.listKeys({ accountId: alice.id, includeDeleted: true }), [{ ...keys.aliceNew, deletedAt: NOW + 2000 }, keys.aliceOld]);
  });

  test(title('a key is deleted once, and only by its own account'), async (t) => {
    const { store, alice, bob } = await withKeys(t);
    t.false(await store.deleteKey('k1', NOW, bob.id), "another account's key");
    t.is((await store.findCredential('k1'))?.key.deletedAt, null);
    t.true(await store.deleteKey('k1', NOW + 1, alice.id));
    t.false(await store.deleteKey('k1', NOW + 2, alice.id), 'already deleted');
    t.is((await store.findCredential('k1'))?.key.deletedAt, NOW + 1, 'the first deletion time stays');
    t.false(await store.deleteKey('no-such-key', NOW));
    t.true(await store.deleteKey('k3', NOW), 'without an account, any live key');
  });

  test(title('a credential carries its digest and account, deleted or not; touching records last use'), async (t) => {
    const { store, alice, keys } = await withKeys(t);
    const credential = await store.findCredential('k1');
    t.deepEqual(credential, { key: keys.aliceOld, digest: digestOf('k1'), account: alice });
    t.true(Buffer.isBuffer(credential!.digest));
    await store.touchKey('k1', NOW + 5000);
    t.is((await store.findCredential('k1'))?.key.lastUsedAt, NOW + 5000);
    await store.deleteKey('k1', NOW + 6000);
    t.like(await store.findCredential('k1'), { key: { id: 'k1', deletedAt: NOW + 6000, lastUsedAt: NOW + 5000 }, account: { id: alice.id } });
    t.is(await store.findCredential('no-such-key'), undefined);
  });

  test(title('migrating again changes nothing'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice' });
    await store.migrate();
    t.deepEqual(await store.listAccounts(), accounts);
  });

  test(title('concurrent daily charges never exceed the limit'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice' });
    const accountId = accounts[0]!.id;
    const charges = await Promise.all(Array.from({ length: 50 }, () => store.chargeDaily(accountId, DAY, 1, 17)));
    t.is(charges.filter((charge) => charge.granted).length, 17);
    t.true(charges.every((charge) => charge.used <= 17));
    t.deepEqual(await store.usage(accountId, DAY, DAY), [{ day: DAY, used: 17 }]);
  });

  test(title('a charge is granted whole or refused whole, per account and per day'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice' }, { name: 'bob' });
    const [alice, bob] = accounts.map((account) => account.id) as [string, string];
    t.deepEqual(await store.chargeDaily(alice, DAY, 7, 10), { granted: true, used: 7 });
    t.deepEqual(await store.chargeDaily(alice, DAY, 4, 10), { granted: false, used: 7 }, 'would exceed the limit');
    t.deepEqual(await store.chargeDaily(alice, DAY, 3, 10), { granted: true, used: 10 }, 'exactly reaches it');
    t.deepEqual(await store.chargeDaily(alice, '2030-01-16', 10, 10), { granted: true, used: 10 }, 'another day');
    t.deepEqual(await store.chargeDaily(bob, DAY, 5, 10), { granted: true, used: 5 }, 'another account');
    t.deepEqual(await store.chargeDaily(bob, '2030-01-17', 11, 10), { granted: false, used: 0 }, 'more than the limit at once');
    t.deepEqual(await store.usage(bob, '2030-01-17', '2030-01-17'), [], 'a refused charge writes nothing');
  });

  test(title('a refund gives units back, never below zero'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice' });
    const accountId = accounts[0]!.id;
    await store.chargeDaily(accountId, DAY, 5, 10);
    await store.refundDaily(accountId, DAY, 2);
    t.deepEqual(await store.usage(accountId, DAY, DAY), [{ day: DAY, used: 3 }]);
    await store.refundDaily(accountId, DAY, 100);
    t.deepEqual(await store.chargeDaily(accountId, DAY, 10, 10), { granted: true, used: 10 }, 'refunded to zero, not below');
    await t.notThrowsAsync(store.refundDaily(accountId, '2030-02-01', 1), 'a day without usage');
    t.deepEqual(await store.usage(accountId, '2030-02-01', '2030-02-01'), []);
  });

  test(title('usage lists the used days of a range, oldest first'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice' }, { name: 'bob' });
    const [alice, bob] = accounts.map((account) => account.id) as [string, string];
    for (const [day, units] of [['2030-01-20', 4], ['2030-01-05', 1], ['2030-01-31', 6], ['2029-12-31', 9], ['2030-02-01', 2]] as const) {
      await store.chargeDaily(alice, day, units, 100);
    }
    await store.chargeDaily(bob, '2030-01-10', 3, 100);
    await store.chargeDaily(alice, '2030-01-12', 3, 100);
    await store.refundDaily(alice, '2030-01-12', 3);
    t.deepEqual(await store.usage(alice, '2030-01-01', '2030-01-31'), [
      { day: '2030-01-05', used: 1 },
      { day: '2030-01-20', used: 4 },
      { day: '2030-01-31', used: 6 },
    ], 'bounds included; fully refunded days and other accounts left out');
    t.deepEqual(await store.usage(bob, '2029-01-01', '2031-01-01'), [{ day: '2030-01-10', used: 3 }]);
  });

  test(title('a session is found until it expires, and not after deletion'), async (t) => {
    const { store, accounts } = await withAccounts(t, { name: 'alice' });
    const session = { accountId: accounts[0]!.id, csrfToken: randomBytes(16).toString('hex'), expiresAt: NOW + 60_000 };
    await store.createSession('digest-1', session, NOW);
    await store.createSession('digest-2', { ...session, expiresAt: NOW + 1000 }, NOW);
    t.deepEqual(await store.findSession('digest-1', NOW + 59_999), session);
    t.is(await store.findSession('digest-2', NOW + 1000), undefined, 'expired at its expiry time');
    t.is(await store.findSession('no-such-digest', NOW), undefined);
    await store.deleteSession('digest-1');
    t.is(await store.findSession('digest-1', NOW), undefined);
    await t.notThrowsAsync(store.deleteSession('digest-1'), 'deleting twice is harmless');
  });
}
