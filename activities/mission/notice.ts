/** What a gate notice is, and the simplest notifier: the leaf the channels' deliverers and the mission activities share. */
import type { ChannelEvent } from '../../core/channel.js';

/** Who is told about a gate. */
export interface MissionNotice {
  missionId: string;
  gateId: string;
  kind: 'opened' | 'reminder' | 'escalated' | 'withdrawn' | 'decided' | 'expired';
  approvers: { identity: string; channel: string }[];
  text: string;
  /** What the gate is about, for channels that show a full request (Telegram, email). */
  goal?: string;
  tool?: string;
  /** SHA-256 of the pending call's canonical input (its digest, never the input). */
  inputHash?: string;
  /** Why the call needs approval (the tool's escalation reason). */
  why?: string;
  /** Epoch ms when the gate expires. */
  deadline?: number;
  /** The pending call as `describeCall` renders it (canonical input, secrets redacted, long values cut). */
  call?: string[];
  /** Who asked for the call, on which channel (the mission's channel facts). */
  askedBy?: { identity: string; channel: string };
}

/** Tells approvers about a gate (see `routingMissionNotifier`). Must tolerate repeats of one `idemKey`. */
export interface MissionNotifier {
  notify(notice: MissionNotice, idemKey: string): Promise<void>;
}

/** A notifier that publishes notices on a stream (the StreamHub's `publish`), keyed by mission id. */
export function streamMissionNotifier(publish: (key: string, event: ChannelEvent) => void): MissionNotifier {
  return {
    async notify(notice) {
      publish(notice.missionId, {
        type: 'status',
        text: `[gate ${notice.gateId}] ${notice.kind}: ${notice.text} → ${notice.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ')}`,
      });
    },
  };
}
