/** The mission's record: each mission or gate transition the workflow decides, appended once. */
import { Context } from '@temporalio/activity';
import { AivyxError } from '../../core/errors.js';
import { toApplicationFailure } from '../failure.js';
import { LOCAL_ENTRIES, type MissionAuditEvent, type MissionContext } from './context.js';

/** The activity that records mission transitions. */
export function recordActivities({ audit }: MissionContext) {
  return {
    /** Appends one mission or gate transition to the audit log, idempotently. */
    async recordMissionEvent(event: MissionAuditEvent): Promise<void> {
      if (Context.current().info.isLocal && !LOCAL_ENTRIES.has(event.type))
        throw toApplicationFailure(new AivyxError('Internal', `${event.type} is recorded by a remote activity, not a local one`));
      await audit(event);
    },
  };
}
