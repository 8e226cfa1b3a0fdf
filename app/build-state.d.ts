/** Types of app/build-state.js (plain JavaScript: it runs before anything is compiled). */
export declare const SOURCE_DIRS: readonly string[];
export declare function isBuildFresh(root: string): boolean;
