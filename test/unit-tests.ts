/**
 * The test files of vitest's `unit` project (vitest.config.ts): each needs no Temporal, no
 * PostgreSQL or PGlite, no CLI process and no network beyond loopback sockets it opens itself.
 * Every other test file is integration and runs against the servers. A new pure test file goes
 * here (test/lint/unit-project.test.ts refuses one that imports a server-backed helper).
 */
export const UNIT_TESTS = [
  'test/core/**/*.test.ts',
  'test/machines/**/*.test.ts',
  'test/lint/**/*.test.ts',
  'test/activities/anthropic-provider.test.ts',
  'test/activities/channel-send.test.ts',
  'test/activities/config-audit-tools.test.ts',
  'test/activities/confinement.test.ts',
  'test/activities/fs-extra-tools.test.ts',
  'test/activities/git-tools.test.ts',
  'test/activities/mcp-call.test.ts',
  'test/activities/mission-control.test.ts',
  'test/activities/mission-create.test.ts',
  'test/activities/net-tools.test.ts',
  'test/activities/openai-provider.test.ts',
  'test/activities/scripted-provider.test.ts',
  'test/activities/sse.test.ts',
  'test/activities/tools.test.ts',
  'test/channels/mission-events.test.ts',
  'test/channels/restart-dedupe.test.ts',
  'test/channels/turn-gateway-stream.test.ts',
  'test/email/config.test.ts',
  'test/email/threading.test.ts',
  'test/email/trust.test.ts',
  'test/infra/codec-server.test.ts',
  'test/infra/config-doc.test.ts',
  'test/infra/free-port.test.ts',
  'test/infra/log-redaction.test.ts',
  'test/infra/passphrase.test.ts',
  'test/infra/payload-codec.test.ts',
  'test/infra/rfc-vectors.test.ts',
  'test/infra/telemetry-spans.test.ts',
  'test/infra/tier-policy.test.ts',
  'test/telegram/approvals.test.ts',
  'test/telegram/config.test.ts',
  'test/telegram/trust.test.ts',
  'test/workflows/patches.test.ts',
] as const;
