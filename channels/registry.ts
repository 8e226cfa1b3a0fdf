/**
 * Every chat channel, in the order `aivyx up` starts them. A channel is one folder under channels/
 * and one line here (docs/CONTRIBUTING.md, "Adding a channel"); the stack starts each configured
 * entry through the contract in channels/contract.ts. REST and the CLI are the local channels the
 * stack always runs; they are not chat channels.
 */
import type { ChatChannel } from './contract.js';
import { emailChannel } from './email/channel.js';
import { matrixChannel } from './matrix/channel.js';
import { telegramChannel } from './telegram/channel.js';

export const CHANNELS: readonly ChatChannel[] = Object.freeze([
  telegramChannel,
  emailChannel,
  matrixChannel,
  // New channels go above this line (docs/CONTRIBUTING.md, "Adding a channel").
]);
