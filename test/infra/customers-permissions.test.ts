// Permissions per command (issue 15 item 9), walked over the whole registry so every command added
// later is covered too: each command needs its permission; a key holding every other command's name
// but not this one is refused (ACCESS_DENIED naming the command) through json.php AND the command's
// REST path, and a key holding it (by name, by its family wildcard or by its deepest wildcard) gets past
// the check on both. An API user grants only what it holds.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra, type RunningServer, type Storage } from '../helpers/server.js';
import { InfraClient, type Auth } from '../helpers/infra-client.js';
import { createCustomer, type TestCustomer } from '../helpers/infra-customers.js';
import { allCommands } from '../../src/infra/commands/index.js';
import type { Command } from '../../src/infra/command.js';

/** The commands that need no permission, and why; any other command must need its own. */
const WITHOUT_PERMISSION: Record<string, string> = {
  'session.login': 'public: it is how a login gets credentials',
  'customer.jsonwebtoken': 'any valid credentials exchange themselves for a JWT',
};
/**
 * Families that only read the catalogue, the same for every customer: any valid credentials may
 * (access 'authenticated'), so a key holding only device.* can still look up what it orders.
 */
const CATALOGUE_FAMILIES = ['dc', 'installimage', 'isoimage', 'operatingsystem', 'pricing', 'product', 'productgroup', 'template'];

const commands = allCommands();
const needing = commands.filter((c) => (c.access ?? 'permission') === 'permission');
const families = [...new Set(commands.map((c) => c.cmd.split('.')[0]))].sort();

/** The REST path with every {param} filled in: ids no customer of the test holds. */
const restPath = (c: Command) => c.rest.path.replace(/\{[^}]+\}/g, '999999');
const denied = (c: Command) => ({ code: 'ACCESS_DENIED', message: `Access Denied: this API user lacks the permission ${c.cmd}` });

/** The ways a key may hold a command's permission, taken in turn: its name, its family, its deepest wildcard. */
function grantFor(c: Command, i: number): string {
  const parts = c.cmd.split('.');
  if (i % 3 === 1) return `${parts[0]}.*`;
  if (i % 3 === 2) return `${parts.slice(0, -1).join('.')}.*`;
  return c.cmd;
}

await forEachEngine('permissions of every command', (engine) => {
  let server: RunningServer;
  let storage: Storage;
  let stop: () => Promise<void>;
  /** A customer of its own, so the keys and whatever the commands make stay apart from the operator's. */
  let owner: TestCustomer;

  before(async () => {
    ({ server, storage, stop } = await startInfra(engine));
    owner = await createCustomer(storage, server.infraUrl, 'permwalker');
  });
  after(() => stop?.());

  async function key(name: string, permissions: string[]): Promise<Auth> {
    const r = await owner.api.cmd('apiuser.create', { name, permissions });
    assert.equal(r.body.code, 'OK', r.text);
    return { basic: [r.body.apiuser.uuid, r.body.apiuser.secret] };
  }

  it('gives every command a permission, bar the named few, and lists them all in apiuser.permissions.system', async () => {
    for (const c of commands.filter((c) => (c.access ?? 'permission') !== 'permission')) {
      const catalogue = c.access === 'authenticated' && CATALOGUE_FAMILIES.includes(c.cmd.split('.')[0]);
      assert.ok(catalogue || c.cmd in WITHOUT_PERMISSION, `${c.cmd} (access ${c.access}) needs no permission, and is neither named here nor a catalogue read`);
    }
    for (const cmd of Object.keys(WITHOUT_PERMISSION))
      assert.ok(
        commands.some((c) => c.cmd === cmd && c.access !== undefined && c.access !== 'permission'),
        cmd,
      );
    const system: string[] = (await owner.api.cmd('apiuser.permissions.system')).body.permissions;
    for (const c of needing) assert.ok(system.includes(c.cmd), c.cmd);
    for (const c of commands.filter((c) => !needing.includes(c))) assert.ok(!system.includes(c.cmd), `${c.cmd} needs no permission, so none is listed`);
    for (const f of families.filter((f) => needing.some((c) => c.cmd.startsWith(`${f}.`)))) assert.ok(system.includes(`${f}.*`), `${f}.*`);
    assert.ok(system.includes('*'));
  });

  it('refuses a command without its permission on both transports, and admits it with it', async () => {
    // At least one command of every family is walked; all of them, in fact: each costs a few requests.
    assert.ok(needing.length >= 10, `the registry holds ${needing.length} commands needing a permission`);
    const seen = new Set<string>();
    for (const [i, c] of needing.entries()) {
      seen.add(c.cmd.split('.')[0]);
      const others = needing.filter((o) => o.cmd !== c.cmd).map((o) => o.cmd);
      const without = await key(`without ${c.cmd}`, others);
      const api = new InfraClient(server.infraUrl, without);
      const body = c.rest.method === 'GET' || c.rest.method === 'DELETE' ? undefined : {};
      assert.deepEqual((await api.cmd(c.cmd)).body, denied(c), `${c.cmd} by json.php`);
      const viaRest = await api.rest(c.rest.method, restPath(c), body);
      assert.deepEqual(viaRest.body, denied(c), `${c.cmd} by ${c.rest.method} ${c.rest.path}`);

      const grant = grantFor(c, i);
      const holder = new InfraClient(server.infraUrl, await key(`with ${c.cmd}`, [grant]));
      for (const [how, r] of [
        ['json.php', await holder.cmd(c.cmd)],
        [`${c.rest.method} ${c.rest.path}`, await holder.rest(c.rest.method, restPath(c), body)],
      ] as const) {
        assert.notDeepEqual(r.body, denied(c), `${c.cmd} by ${how} holding ${grant}: ${r.text}`);
        assert.notEqual(r.body.message, 'Access Denied', `${c.cmd} by ${how}: the key itself is accepted`);
        assert.ok(typeof r.body.code === 'string' && r.status === 200, `${c.cmd} by ${how}: an envelope (${r.status} ${r.text})`);
        // Past the check, no parameters (or an id nobody holds) is the client's mistake, not a crash.
        assert.notEqual(r.body.message, 'Internal server error', `${c.cmd} by ${how} with no parameters`);
      }
    }
    assert.deepEqual([...seen].sort(), [...new Set(needing.map((c) => c.cmd.split('.')[0]))].sort(), 'every family walked');
  });

  it('refuses every command but the public ones without credentials, and lets any key reach those needing none', async () => {
    const bare = new InfraClient(server.infraUrl, null);
    const none = new InfraClient(server.infraUrl, await key('no permissions', []));
    for (const c of commands.filter((c) => c.access !== 'public')) {
      const body = c.rest.method === 'GET' || c.rest.method === 'DELETE' ? undefined : {};
      assert.deepEqual((await bare.cmd(c.cmd)).body, { code: 'ACCESS_DENIED', message: 'Access Denied' }, `${c.cmd} by json.php`);
      assert.deepEqual((await bare.rest(c.rest.method, restPath(c), body)).body, { code: 'ACCESS_DENIED', message: 'Access Denied' }, `${c.cmd} by REST`);
      if (needing.includes(c)) continue;
      for (const r of [await none.cmd(c.cmd), await none.rest(c.rest.method, restPath(c), body)]) {
        assert.notEqual(r.body.code, 'ACCESS_DENIED', `${c.cmd} needs no permission: ${r.text}`);
        assert.notEqual(r.body.message, 'Internal server error', c.cmd);
      }
    }
  });

  it('lets an API user grant only what it holds, for every family', async () => {
    for (const family of families.filter((f) => needing.some((c) => c.cmd.startsWith(`${f}.`)))) {
      const granter = new InfraClient(server.infraUrl, await key(`granter ${family}`, ['apiuser.create', `${family}.*`]));
      const mine = needing.find((c) => c.cmd.startsWith(`${family}.`))!;
      const ok = await granter.cmd('apiuser.create', { name: `granted ${family}`, permissions: [`${family}.*`, mine.cmd] });
      assert.equal(ok.body.code, 'OK', `${family}: ${ok.text}`);
      const foreign = needing.find((c) => !c.cmd.startsWith(`${family}.`) && c.cmd !== 'apiuser.create');
      for (const wanted of ['*', ...(foreign ? [foreign.cmd, `${foreign.cmd.split('.')[0]}.*`] : [])]) {
        const r = await granter.cmd('apiuser.create', { name: 'escalation', permissions: [`${family}.*`, wanted] });
        assert.deepEqual(r.body, { code: 'ACCESS_DENIED', message: `Access Denied: cannot grant "${wanted}", which this caller does not hold` }, `${family} granting ${wanted}`);
      }
    }
  });
});
