/** Durations live in core (mission specs are checked there too); re-exported for the machines' users. */
export { durationMs } from '../core/duration.js';
