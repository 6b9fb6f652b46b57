// Every command of the registry is in the OpenAPI document the server serves (issue 15 item 9),
// walked over allCommands() so commands added later are held to it too: its REST operation with
// x-vendor-cmd, the operationId rule, its path parameters, every parameter it takes, the security it
// needs, and its name among json.php's commands.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra, type RunningServer } from '../helpers/server.js';
import { send } from '../helpers/infra-client.js';
import { allCommands } from '../../src/infra/commands/index.js';
import { openApiDocument } from '../../src/infra/openapi.js';

const commands = allCommands();

await forEachEngine('the served OpenAPI document', (engine) => {
  let server: RunningServer;
  let stop: () => Promise<void>;
  let doc: any;

  before(async () => {
    ({ server, stop } = await startInfra(engine));
    // Any version prefix serves it; no credentials are needed to read it.
    const r = await send(`${server.infraUrl}/api/v2.9/openapi.json`, {});
    assert.equal(r.status, 200);
    doc = r.body;
  });
  after(() => stop?.());

  it('is the document the registry makes', () => {
    assert.deepEqual(doc, JSON.parse(JSON.stringify(openApiDocument(commands))));
  });

  it('documents every command of the registry at its REST path, with every parameter it takes', () => {
    const enumerated: string[] = doc.components.schemas.CommandPayload.properties.cmd.enum;
    const ids = new Set<string>();
    for (const c of commands) {
      const method = c.rest.method.toLowerCase();
      const op = doc.paths[c.rest.path]?.[method];
      assert.ok(op, `${c.cmd}: no ${c.rest.method} ${c.rest.path} in the document`);
      assert.equal(op['x-vendor-cmd'], c.cmd);
      assert.equal(op.operationId, `${method}_${c.cmd.replaceAll('.', '_')}`);
      assert.ok(!ids.has(op.operationId), `${op.operationId} is unique`);
      ids.add(op.operationId);
      assert.ok(op.description.includes(`\`${c.cmd}\``), `${c.cmd}: the description names the command`);
      assert.ok(op.tags.includes(c.cmd.split('.')[0]), `${c.cmd}: tagged with its family`);
      assert.ok(enumerated.includes(c.cmd), `${c.cmd} is among json.php's commands`);
      // Public commands say they need no credentials; the rest take the document's schemes.
      assert.deepEqual(op.security, c.access === 'public' ? [] : undefined, `${c.cmd}: security`);

      const inPath = [...c.rest.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const parameters: { name: string; in: string; required: boolean }[] = op.parameters;
      for (const name of inPath)
        assert.ok(
          parameters.some((p) => p.in === 'path' && p.name === name && p.required),
          `${c.cmd}: path parameter ${name}`,
        );
      const documented = new Set([...parameters.map((p) => p.name), ...Object.keys(op.requestBody?.content['application/json'].schema.properties ?? {})]);
      const takes = Object.keys((c.normalise?.input ?? c.params).properties);
      for (const name of takes) assert.ok(documented.has(name), `${c.cmd}: parameter ${name} is documented`);
      if (method === 'get' || method === 'delete') assert.equal(op.requestBody, undefined, `${c.cmd}: a ${c.rest.method} takes query parameters`);
    }
    assert.equal(enumerated.length, commands.length, 'json.php lists the registry and nothing else');
  });
});
