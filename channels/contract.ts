/**
 * The contract every chat channel keeps (Telegram, e-mail, and the next one). A channel is a folder
 * under channels/ and one line in channels/registry.ts; the stack starts every configured registry
 * entry through this contract and never knows a channel by name.
 *
 * What a channel may do is exactly what its context hands it, as ports (channels/ports.ts): submit
 * inbound messages as turns (the turn gateway attests their facts), decide gates for a verified person
 * (the mission gateway signs the decision), register its deliverer (final replies and gate notices from
 * the worker), keep durable state (sealed `channel_state`), and issue/check single-use approval tokens.
 * The tier of a message is the channel's to resolve, from what the platform verified (a Telegram user
 * id, DKIM/SPF) — never from text.
 */
import type { DomainHandle } from '../infra/storage/index.js';
import type { ChatMissionPort, ChatTurnPort, DelivererRegistry, GateTokenPort, OwnerSurfaces } from './ports.js';

/** The capabilities a channel gets when it starts: ports (channels/ports.ts), never the classes behind them. */
export interface ChannelContext {
  /** Inbound submission: a message with its channel facts becomes an attested turn (and a sender may cancel it). */
  gateway: ChatTurnPort;
  /** Approvals (gate decisions for a person the channel verified), `waitFor` events, and a sender's own missions. */
  missions: ChatMissionPort;
  /** Outbound: the channel registers its deliverer under its name. */
  deliveries: DelivererRegistry;
  /** Durable, sealed state of every channel (keys prefixed by the channel). */
  storage: DomainHandle;
  /** MACed single-use approval tokens over `storage`. */
  gateTokens: GateTokenPort;
  /** The owner's identities and what only they may see (their skills); absent: nothing owner-only here. */
  owner?: OwnerSurfaces;
  log: (line: string) => void;
}

/** Where a channel reads its configuration: the environment and the sealed secrets. */
export interface ChannelSettingsSource {
  env: NodeJS.ProcessEnv;
  secret: (name: string) => Promise<string | undefined>;
}

/** A started channel (its outbound side is registered in the context's `deliveries`). */
export interface RunningChannel {
  /** One line for the startup log: how it listens. */
  describe: string;
  /** Stops receiving; turns keep running in Temporal, and their replies wait for the next start. */
  stop(): Promise<void>;
}

/** A chat channel: how it reads its configuration, and how it starts. */
export interface ChatChannel<C = unknown> {
  /** Instance name: in turn and session ids, the delivery registry and audit entries. */
  name: string;
  /** Shown in health and errors: "the Telegram channel". */
  label: string;
  /** Checks its settings in the environment before anything starts (bad settings throw Config); secrets come later. */
  check?(env: NodeJS.ProcessEnv): void;
  /** Its configuration, or undefined when it is not configured (it then stays off). Bad settings throw Config. */
  configure(source: ChannelSettingsSource): Promise<C | undefined>;
  start(config: C, ctx: ChannelContext): Promise<RunningChannel>;
  /**
   * Only the outbound side (final replies, gate notices, `channel.send`), for an `aivyx worker`: the
   * worker's delivery activities send through it while a gateway receives. Registers its deliverer
   * in `ctx.deliveries`; `stop()` unregisters it. A channel whose replies need the process that
   * received the message (an open socket) has none: it runs under `aivyx up` only.
   */
  outbound?(config: C, ctx: OutboundContext): Promise<RunningChannel>;
}

/** What the outbound side of a channel gets in a worker: no gateway, it receives nothing. */
export type OutboundContext = Pick<ChannelContext, 'deliveries' | 'storage' | 'gateTokens' | 'log'>;

/** Declares a channel (keeps its config type inside its own folder). */
export function defineChannel<C>(channel: ChatChannel<C>): ChatChannel {
  return channel as ChatChannel;
}
