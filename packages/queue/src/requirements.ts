/**
 * What a worker must have to take a run's items: the versions of the packages that compute them
 * and the content hashes of the files they read (model and policy directories). The coordinator
 * records its own with every item; a worker whose own differ refuses the run.
 */
export interface RunRequirements {
  /** The package that computes the items (e.g. `@lethe/eval`): `packages` are it and those below it. */
  readonly root: string;
  /** Package name → version, as `dependencyVersions` reads them. */
  readonly packages: Readonly<Record<string, string>>;
  /** Path (as the items name it, relative to the working directory or absolute) → `contentHash`. */
  readonly files: Readonly<Record<string, string>>;
}

/** Packages whose versions count: Lethe's own and the tensor library's. */
export function countsAsComputing(name: string): boolean {
  return name.startsWith('@lethe/') || name.startsWith('@tensorflow/');
}
