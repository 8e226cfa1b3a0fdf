/** Wiring the turn activities to real adapters: shared by `aivyx up`, `aivyx chat`, tests and benchmarks. */
import type { Kysely } from 'kysely';
import type { LlmProvider } from '../activities/llm/llm-provider.js';
import type { AgentConfig, ConfirmationPort, MissionControlPort, MissionStartPort, ResumeRecordPort } from '../activities/ports.js';
import { createAuditReadTool } from '../activities/tools/audit-read.js';
import { createConfigTools } from '../activities/tools/config-tools.js';
import { createGitTools } from '../activities/tools/git-tools.js';
import { createMcpCallTool } from '../activities/tools/mcp-call.js';
import type { McpClientPool } from '../activities/mcp/mcp-client.js';
import type { McpTierGrants } from '../core/tools/mcp-tools.js';
import { channelSenderFromRegistry, createChannelSendTool, createShellSpawnTool, createStarterTools } from '../activities/tools/index.js';
import { createMissionCreateTool } from '../activities/tools/mission-create.js';
import { createMissionControlTools } from '../activities/tools/mission-control.js';
import { createAgentDelegateTool } from '../activities/tools/agent-delegate.js';
import { createMemoryStore } from '../infra/memory-store.js';
import { createSkillTools } from '../activities/tools/skill-tools.js';
import { createGraphTools } from '../activities/tools/graph-tools.js';
import { createSkillStore, type SkillStore } from '../infra/skill-store.js';
import { createGraphStore, type GraphStore } from '../infra/graph-store.js';
import type { MemoryStore } from '../activities/tools/memory-port.js';
import { createOwnerMemory, type OwnerMemory } from './owner-memory.js';
import { createOwnerSkills, type OwnerSkills } from './owner-skills.js';
import type { SkillEditGates } from './owner-skill-edits.js';
import type { ToolImplementation } from '../activities/tools/tool-implementation.js';
import type { ProtectedPaths } from '../activities/tools/confinement.js';
import { createTurnActivities } from '../activities/turn-activities.js';
import {
  createMissionActivities,
  streamMissionNotifier,
  type MissionNotifier,
  type ScheduleRecordPort,
} from '../activities/mission-activities.js';
import { createAttestor } from '../infra/attestation.js';
import { createClaimPort } from '../infra/authority-claims.js';
import { createToolCallLog } from '../infra/tool-call-log.js';
import { tailAuditEntries, tailAuditEntriesOfSession } from '../infra/audit/index.js';
import { createConfigStore } from '../infra/config-store.js';
import { createAuditPort } from '../infra/audit-port.js';
import type { MasterKey } from '../infra/crypto/index.js';
import type { Database } from '../infra/db/index.js';
import { createDeliveryActivities, DeliveryRegistry } from '../activities/delivery-activities.js';
import { createMissionWaits } from '../infra/mission-waits.js';
import { createInbox } from '../infra/inbox.js';
import { createValueStore } from '../infra/value-store.js';
import { createValueReadTool } from '../activities/tools/value-read.js';
import { quarantinedReader } from '../activities/llm/quarantined-reader.js';
import { createResumeRecords } from '../infra/resume-records.js';
import { createSessionHistory } from '../infra/session-history.js';
import type { SessionClearing } from '../channels/turn-gateway.js';
import { createSpendLedger } from '../infra/spend-ledger.js';
import { SealedStorage } from '../infra/storage/index.js';
import { createAttachmentStore } from '../infra/attachments.js';
import { createFsAttachTool } from '../activities/tools/fs-attach.js';
import type { StreamBus } from '../infra/stream-bus.js';
import { createIntentStore } from '../infra/tool-intent-store.js';
import { tracedLlmProvider } from '../infra/telemetry/index.js';

/** Inputs of `wireTurnActivities`. */
export interface WiringInput {
  db: Kysely<Database>;
  master: MasterKey;
  hub: StreamBus;
  llm: LlmProvider;
  /** The models of specialists that name one, by specialist name (built at start from AIVYX_SPECIALISTS). */
  specialistLlms?: ReadonlyMap<string, LlmProvider>;
  agent: AgentConfig;
  /** Configured MCP servers (their tools run as `mcp.call`) and the tiers opted in to them. */
  mcp?: {
    pool: McpClientPool;
    tierGrants: McpTierGrants;
    /** Servers whose own read-only declarations the owner believes (AIVYX_MCP_TRUST_HINTS). */
    trustHints?: readonly string[];
  };
  /** Opens confirmation gates for channel turns that end `Escalated` (confirm-first); none in bare tests. */
  confirmations?: ConfirmationPort;
  /** Starts the missions `mission.create` calls create; none: the tool says this worker cannot. */
  missionStarts?: MissionStartPort;
  /** Lists and cancels existing missions for `mission.list`/`mission.cancel`; none: they say this worker cannot. */
  missionControl?: MissionControlPort;
  /** The Schedules' record of their runs (recurring missions); none: scheduled runs are refused. */
  schedules?: ScheduleRecordPort;
  /** Channels' outbound sides (`deliverReply`); default an empty registry. */
  deliveries?: DeliveryRegistry;
  /** Replaces the starter tools (tests add slow or failing tools here). */
  tools?: readonly ToolImplementation[];
  /** Tells approvers about gates; default: status lines on the stream hub, keyed by mission id. */
  notifier?: MissionNotifier;
  /** The largest file `fs.attach` hands over (`AIVYX_ATTACHMENT_MAX_BYTES`; default core/attachments.ts). */
  attachmentMaxBytes?: number;
  /** How long a stored attachment is served (`AIVYX_ATTACHMENT_TTL`; default infra/attachments.ts). */
  attachmentTtlMs?: number;
  /** What no host tool reaches below Kernel: the data directory, the passphrase file (infra/data-dir.ts). */
  protectedPaths?: ProtectedPaths;
}

/** The worker's activities (turns, missions, delivery) over PostgreSQL/PGlite, the master key's subkeys and the stream hub. */
export function wireTurnActivities(input: WiringInput) {
  const proofs = createAttestor(input.master.subkey('attestation'));
  const claims = createClaimPort(input.db);
  const audit = createAuditPort(input.db, input.master.subkey('audit'));
  const storage = SealedStorage.open(input.db, input.master);
  // Each model step in a GenAI span (a no-op unless tracing is on).
  const llm = tracedLlmProvider(input.llm);
  const toolCalls = createToolCallLog(input.db, input.master.subkey('audit'));
  const resumes = createResumeRecords(storage.domain('sessions'));
  const turn = createTurnActivities({
    audit,
    proofs,
    claims,
    toolCalls,
    stream: input.hub,
    // Local channels live in this process and hear the outcome through the hub.
    delivery: { deliver: async (req, outcome) => input.hub.publish(req.turnId, { type: 'final', outcome }) },
    history: createSessionHistory(storage.domain('sessions')),
    agent: input.agent,
    llm,
    ...(input.specialistLlms?.size
      ? { specialistLlms: new Map([...input.specialistLlms].map(([name, p]) => [name, tracedLlmProvider(p)] as const)) }
      : {}),
    ...(input.mcp ? { mcp: input.mcp } : {}),
    ...(input.confirmations ? { confirmations: input.confirmations } : {}),
    // agent.delegate attests child turns with the worker's own key, whatever other tools a test replaces.
    tools: [
      ...(input.tools ?? defaultTools(input, storage)),
      createAgentDelegateTool({ proofs, specialists: input.agent.specialists ?? [] }),
    ],
    spend: createSpendLedger(input.db),
    values: createValueStore(storage.domain('sessions')),
    resumes,
  });
  // Mission step turns are attested here, by the worker, only for verified missions; gate notices go to `notifier`.
  const missions = createMissionActivities({
    audit,
    proofs,
    claims,
    notifier: input.notifier ?? streamMissionNotifier((key, e) => input.hub.publish(key, e)),
    ...(input.schedules ? { schedules: input.schedules } : {}),
    // Open waits are indexed where the channels (in this install's database) look them up.
    waits: createMissionWaits(storage.domain('channel_state')),
    llm,
    ...(input.agent.spendBudgets?.mission ? { missionBudget: input.agent.spendBudgets.mission } : {}),
    sender: channelSenderFromRegistry(input.deliveries ?? new DeliveryRegistry()),
    owners: input.agent.trustedPlaces?.owners ?? [],
    toolCalls,
    resumes,
  });
  return {
    ...turn,
    ...missions,
    ...createDeliveryActivities(
      input.deliveries ?? new DeliveryRegistry(),
      createInbox(storage.domain('sessions')),
      createAttachmentStore(storage.domain('channel_state'), { ttlMs: input.attachmentTtlMs }),
    ),
  };
}

/** What the gateway's `/clear` needs: the sessions' history (where the worker keeps it), their attachments and the audit log. */
export function sessionClearingOf(db: Kysely<Database>, master: MasterKey, storage = SealedStorage.open(db, master)): SessionClearing {
  return {
    history: createSessionHistory(storage.domain('sessions')),
    attachments: createAttachmentStore(storage.domain('channel_state')),
    audit: createAuditPort(db, master.subkey('audit')),
  };
}

/** The sealed memory store (the memory tools' and the owner's `aivyx memory`). */
export function memoryStoreOf(db: Kysely<Database>, master: MasterKey, storage = SealedStorage.open(db, master)): MemoryStore {
  return createMemoryStore({ db, domain: storage.domain('memory'), memoryKey: master.subkey('memory') });
}

/** The sealed skill store (skills.* and the owner's `aivyx skills`). */
export function skillStoreOf(db: Kysely<Database>, master: MasterKey, storage = SealedStorage.open(db, master)): SkillStore {
  return createSkillStore({ db, domain: storage.domain('memory'), memoryKey: master.subkey('memory') });
}

/** The knowledge graph (graph.* and the owner's `aivyx graph`). */
export function graphStoreOf(db: Kysely<Database>, master: MasterKey, storage = SealedStorage.open(db, master)): GraphStore {
  return createGraphStore({ db, domain: storage.domain('memory'), memoryKey: master.subkey('memory') });
}

/** The worker's resume records (sealed in the `sessions` domain): what an approved rerun runs first. */
export function resumeRecordsOf(db: Kysely<Database>, master: MasterKey, storage = SealedStorage.open(db, master)): ResumeRecordPort {
  return createResumeRecords(storage.domain('sessions'));
}

/** The owner's view of learned skills and the graph's vocabulary for the REST channel: scope-checked like the tools. */
export function ownerSkillsOf(
  db: Kysely<Database>,
  master: MasterKey,
  agent: Pick<AgentConfig, 'capabilities' | 'tierPolicy'>,
  /** Where an owner's edit waits for approval (none: edits are refused). */
  edits?: SkillEditGates,
): OwnerSkills {
  const storage = SealedStorage.open(db, master);
  return createOwnerSkills({
    ...(edits ? { edits } : {}),
    skills: skillStoreOf(db, master, storage),
    graph: graphStoreOf(db, master, storage),
    capabilities: agent.capabilities,
    ...(agent.tierPolicy ? { tierPolicy: agent.tierPolicy } : {}),
    audit: createAuditPort(db, master.subkey('audit')),
  });
}

/** The owner's view of memory for the REST channel: scope-checked and audited like the memory tools. */
export function ownerMemoryOf(
  db: Kysely<Database>,
  master: MasterKey,
  agent: Pick<AgentConfig, 'capabilities' | 'tierPolicy'>,
): OwnerMemory {
  return createOwnerMemory({
    store: memoryStoreOf(db, master),
    audit: createAuditPort(db, master.subkey('audit')),
    capabilities: agent.capabilities,
    ...(agent.tierPolicy ? { tierPolicy: agent.tierPolicy } : {}),
  });
}

/** Every tool this worker offers: the starter set, memory, git, config, audit.read, mcp.call, shell.spawn and channel.send. */
function defaultTools(input: WiringInput, storage: SealedStorage): ToolImplementation[] {
  const intents = createIntentStore(input.db);
  const confined = input.protectedPaths === undefined ? {} : { protectedPaths: input.protectedPaths };
  return [
    ...createStarterTools({
      intents,
      memory: memoryStoreOf(input.db, input.master, storage),
      ...confined,
    }),
    ...createGitTools({ intents, ...confined }),
    ...createConfigTools({ store: createConfigStore(storage) }),
    createAuditReadTool({
      reader: {
        tail: (n) => tailAuditEntries(input.db, n),
        tailOfSession: (sessionId, n) => tailAuditEntriesOfSession(input.db, sessionId, n),
      },
    }),
    ...(input.mcp ? [createMcpCallTool({ pool: input.mcp.pool, intents })] : []),
    createShellSpawnTool({ intents, ...confined }),
    // Without a registry no channel can send: every call fails with "no channel named ...".
    createChannelSendTool({ sender: channelSenderFromRegistry(input.deliveries ?? new DeliveryRegistry()) }),
    createMissionCreateTool({
      ...(input.missionStarts ? { starts: input.missionStarts } : {}),
      owners: input.agent.trustedPlaces?.owners ?? [],
    }),
    ...createMissionControlTools(input.missionControl ? { control: input.missionControl } : {}),
    createValueReadTool({ reader: quarantinedReader(input.llm) }),
    ...createSkillTools({ store: skillStoreOf(input.db, input.master, storage) }),
    ...createGraphTools({ store: graphStoreOf(input.db, input.master, storage) }),
    createFsAttachTool({
      store: createAttachmentStore(storage.domain('channel_state')),
      ...(input.attachmentMaxBytes ? { maxBytes: input.attachmentMaxBytes } : {}),
      ...confined,
    }),
    // New tools go above this line (docs/CONTRIBUTING.md, "Adding a tool").
  ];
}
