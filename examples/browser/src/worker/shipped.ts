import shipped from '../../shipped.json';

/** A learned policy shipped for a model: its policy directory and the options it runs with. */
export interface ShippedPolicy {
  readonly dir: string;
  readonly options?: Readonly<Record<string, unknown>>;
}

/** A model the page ships, and the learned policies trained for it. */
export interface ShippedModel {
  readonly id: string;
  readonly label: string;
  readonly dir: string;
  readonly policies: Readonly<Record<string, ShippedPolicy | undefined>>;
}

/** The shipped models, in the order the page offers them (`shipped.json`). */
export const SHIPPED_MODELS: readonly ShippedModel[] = shipped.models;

/** The URL of shipped directory `dir` (`models/<dir>/` beside the page). */
export function shippedUrl(dir: string, base: string): string {
  return new URL(`models/${dir}/`, base).href;
}
