/**
 * The operator's view of missions in the Temporal UI, rendered by headless Chromium: a dev
 * server of its own with the UI on, three missions waiting at a gate and one completed, and the
 * workflow list filtered by `AivyxMissionState="waiting"`. The rendered DOM must list exactly the
 * waiting ones (so a broken filter, search attribute or page fails the test); the screenshot is
 * written to a temp dir and, with AIVYX_UPDATE_SCREENSHOTS=1, to docs/images/ for OPERATOR-UI.md.
 * Skipped when Chromium is not installed (`apt-get install chromium`), except under CI, where it fails.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalCli, freePort, startDevServer, type DevServer } from '../../infra/temporal/index.js';
import {
  missionStartMetadata,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { signedMissionArgs } from '../../channels/mission-gateway.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { dumpDom, findChromium, pngSize, screenshot } from '../support/ui-chromium.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const chromium = findChromium();
const WAITING_QUERY = 'AivyxMissionState="waiting"';
const SCREENSHOT = join(projectRoot, 'docs/images/operator-ui-waiting-missions.png');

const script = {
  rules: [
    {
      match: 'deploy',
      steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] }, { say: 'deployed: {{results}}' }],
    },
    { steps: [{ say: 'step done' }] },
  ],
};

function definition(goal: string, step: string): MissionDefinition {
  const missionId = `mission-${randomUUID()}`;
  return {
    missionId,
    goal,
    steps: [{ text: step }],
    approvers: [{ identity: 'alice', channel: 'telegram' }],
    onExpire: 'fail',
    capabilities: ['shell.exec'],
    channel: { name: 'mission', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: 'owner' },
  };
}

let home: string;
let server: DevServer | undefined;
let native: NativeConnection | undefined;
let client: Client | undefined;
let h: MissionHarness | undefined;

// Skipped where Chromium is not installed, except in CI, which must have it (.ci/run installs it).
describe.skipIf(!chromium && !process.env.CI)(
  `Temporal UI: missions waiting at a gate${chromium ? '' : ' (skipped: no Chromium at /usr/bin/chromium; apt-get install chromium, or set CHROMIUM_PATH)'}`,
  () => {
    beforeAll(async () => {
      if (!chromium) throw new Error('Chromium is not installed: apt-get install chromium (or set CHROMIUM_PATH)');
      home = mkdtempSync(join(tmpdir(), 'aivyx-ui-shot-'));
      // Its own server: the shared one is headless. startDevServer registers the aivyx search attributes.
      server = await startDevServer({ cliPath: findTemporalCli({ env: process.env, projectRoot }), home, uiPort: await freePort() });
      native = await NativeConnection.connect({ address: server.address });
      client = new Client({ connection: await Connection.connect({ address: server.address }) });
      h = await startMissionHarness({ nativeConnection: native }, { script });
    }, 120_000);

    afterAll(async () => {
      await h?.stop();
      await native?.close();
      await client?.connection.close();
      await server?.stop();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    it('the workflow list filtered by AivyxMissionState="waiting" shows the waiting missions and not the completed one', async () => {
      const c = client as Client;
      const harness = h as MissionHarness;
      const start = (def: MissionDefinition) =>
        c.workflow.start<typeof missionWorkflow>('missionWorkflow', {
          workflowId: def.missionId,
          taskQueue: harness.taskQueue,
          args: [signedMissionArgs(harness.attestor, def, { dashboard: true })],
          ...missionStartMetadata(def),
        });

      const done = definition('write the release notes', 'prepare the notes');
      const waiting = [
        definition('ship release 42', 'deploy the build'),
        definition('rotate the API keys', 'deploy the new keys'),
        definition('migrate the database', 'deploy the migration'),
      ];
      const doneHandle = await start(done);
      const handles = await Promise.all(waiting.map(start));
      expect(await doneHandle.result()).toMatchObject({ state: 'completed' });
      for (const handle of handles) {
        for (let i = 0; ; i++) {
          const s = await handle.query(missionStatusQuery);
          if (s.state === 'waiting' && s.gate?.state === 'open') break;
          if (i > 600) throw new Error(`${handle.workflowId} never reached its gate`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      // Visibility (what the UI asks the server) agrees before the browser looks.
      const ids = waiting.map((d) => d.missionId).sort();
      for (let i = 0; ; i++) {
        const listed: string[] = [];
        for await (const wf of c.workflow.list({ query: WAITING_QUERY })) listed.push(wf.workflowId);
        if (JSON.stringify(listed.sort()) === JSON.stringify(ids)) break;
        if (i > 100) throw new Error(`visibility lists ${listed.join(', ')} for ${WAITING_QUERY}`);
        await new Promise((r) => setTimeout(r, 200));
      }

      const url = `${server?.uiUrl ?? ''}/namespaces/default/workflows?query=${encodeURIComponent(WAITING_QUERY)}`;
      const dom = await dumpDom(chromium as string, url);
      for (const id of ids) expect(dom, `${id} in the rendered list`).toContain(id);
      expect(dom, 'the completed mission is filtered out').not.toContain(done.missionId);
      expect(dom).toContain('AivyxMissionState');

      const out = join(home, 'operator-ui-waiting-missions.png');
      await screenshot(chromium as string, url, out);
      const png = pngSize(out);
      expect(png).toMatchObject({ width: 1400, height: 900 });
      // A blank or spinner-only page compresses to a few KiB; the rendered list is far larger.
      expect(png.bytes).toBeGreaterThan(30_000);
      if (process.env.AIVYX_UPDATE_SCREENSHOTS === '1') {
        mkdirSync(join(projectRoot, 'docs/images'), { recursive: true });
        copyFileSync(out, SCREENSHOT);
      }
    }, 90_000);
  },
);
