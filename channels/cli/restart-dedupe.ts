/**
 * A terminal cannot take back text it printed. When an LLM step restarts (a retried activity
 * streams its text again), this filter swallows the re-sent text as long as it repeats what was
 * already shown; if the new attempt goes a different way it says so once and shows that attempt whole.
 */
export interface RestartDedupe {
  /** Text of the current step to show (possibly empty), given a streamed chunk. */
  text(chunk: string): { show: string; diverged: boolean };
  /** The step restarted: what it had shown is expected again. */
  restarted(): void;
  /** A new step began (a tool ran): nothing is expected any more. */
  nextStep(): void;
}

export function createRestartDedupe(): RestartDedupe {
  let shown = '';
  let expected = '';
  return {
    text(chunk) {
      let i = 0;
      while (i < chunk.length && i < expected.length && chunk[i] === expected[i]) i++;
      shown += chunk;
      if (i < chunk.length && expected.length > i) {
        // Diverged: show the new attempt from its start, after a notice, so it reads whole.
        expected = '';
        return { show: shown, diverged: true };
      }
      expected = expected.slice(i);
      return { show: chunk.slice(i), diverged: false };
    },
    restarted() {
      expected = shown;
      shown = '';
    },
    nextStep() {
      shown = '';
      expected = '';
    },
  };
}
