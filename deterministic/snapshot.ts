/**
 * A workspace as a turn found it when it began, kept in its session's message store: `harness
 * rerun` and `harness fork` start from it. prepareTurn takes it; its result (in the turn's
 * history) names it, so the record says where to find it.
 */

/** What a turn's history holds of its starting workspace. */
export interface WorkspaceSnapshot {
  /** Hash of the manifest (a SnapshotManifest as JSON) in the session's store; absent when the workspace was empty or missing. */
  manifest?: string;
  /** Regular files taken, and their bytes. */
  files: number;
  bytes: number;
  /** A few of the entries left out, each with why (`big.bin (over 2 MiB)`, `link (a symbolic link)`). */
  left?: string[];
  /** How many entries were left out in all (more than `left` names when many were). */
  leftCount?: number;
}

/** One file of a snapshot: its path in the workspace and its content's hash in the store. */
export interface SnapshotFile {
  path: string;
  hash: string;
  /** The stored text is the content in base64 (it was not UTF-8). */
  b64?: true;
  /** Executable by its owner. */
  x?: true;
}

/** The stored manifest: files, and folders (so empty ones come back too), parents first. */
export interface SnapshotManifest {
  files: SnapshotFile[];
  dirs: string[];
}
