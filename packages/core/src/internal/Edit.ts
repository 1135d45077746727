/**
 * The token of one run of in-place updates of the persistent maps (the
 * "transients" of Clojure and Immutable.js). A node created during the run
 * carries the run's token, and later updates of the same run change such a
 * node in place instead of copying it again. Nodes made before the run, or
 * by another run, carry another token (or none) and are copied as usual, so
 * every map published before the run stays unchanged. A run ends when its
 * owner drops the token: no later update carries it again.
 */
// No fields: tokens are told apart by identity only.
export class Edit {}

/** Whether `edit` (a run's token, if any) owns a node stamped `owner`. */
export const owns = (edit: Edit | undefined, owner: Edit | undefined): boolean =>
  edit !== undefined && owner === edit;
