/** The `aivyx audit` lines of the usage text (apart from the commands, so `aivyx --help` loads nothing heavy). */
export const AUDIT_USAGE = `  aivyx audit verify [--checkpoint FILE] check the chain, the Merkle tree and the checkpoints (witness file, or FILE);
                                         exits non-zero and names the entry or checkpoint when a guarantee fails
  aivyx audit tail [-n N] [--json]       show the newest audit entries
  aivyx audit pubkey                     the key that verifies this install's audit checkpoints (signed-note vkey)
  aivyx audit prove SEQ                  inclusion proof of entry SEQ in a freshly signed checkpoint
  aivyx audit consistency CHECKPOINT     prove the log only grew since CHECKPOINT (a file, - for stdin, or its text)`;
